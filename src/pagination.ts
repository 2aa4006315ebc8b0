export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

/** One page of a list: counts the whole list, then fetches the page's rows from their offset. */
export function paginate<T>(page: number, limit: number, count: () => number, fetch: (offset: number, limit: number) => T[]): Page<T> {
  const total = count();
  return { items: fetch((page - 1) * limit, limit), pagination: { page, limit, total, pages: Math.ceil(total / limit) } };
}
