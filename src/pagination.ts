import type { Steps } from './db/steps.js';

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

/** Where page `page` of a list of `total` entries, `limit` per page, is. */
export const paginationOf = (page: number, limit: number, total: number): Pagination => ({ page, limit, total, pages: Math.ceil(total / limit) });

const pageOf = <T>(page: number, limit: number, total: number, items: T[]): Page<T> => ({ items, pagination: paginationOf(page, limit, total) });

/** One page of a list: counts the whole list, then fetches the page's rows from their offset. */
export function paginate<T>(page: number, limit: number, count: () => number, fetch: (offset: number, limit: number) => T[]): Page<T> {
  const total = count();
  return pageOf(page, limit, total, fetch((page - 1) * limit, limit));
}

/** paginate() for a database answered asynchronously (PostgreSQL): the count and the page are read at once. */
export async function paginateAsync<T>(
  page: number,
  limit: number,
  count: () => Promise<number>,
  fetch: (offset: number, limit: number) => Promise<T[]>,
): Promise<Page<T>> {
  const [total, items] = await Promise.all([count(), fetch((page - 1) * limit, limit)]);
  return pageOf(page, limit, total, items);
}

/** paginate() as a store's steps (src/db/steps.ts): the count, then the page's rows from their offset. */
export function* paginateSteps<T>(page: number, limit: number, count: () => Steps<number>, fetch: (offset: number, limit: number) => Steps<T[]>): Steps<Page<T>> {
  const total = yield* count();
  return pageOf(page, limit, total, yield* fetch((page - 1) * limit, limit));
}
