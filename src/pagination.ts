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

/** One page of a list, as a store's steps (src/db/steps.ts): the count, then the page's rows from their offset. */
export function* paginateSteps<T>(page: number, limit: number, count: () => Steps<number>, fetch: (offset: number, limit: number) => Steps<T[]>): Steps<Page<T>> {
  const total = yield* count();
  return pageOf(page, limit, total, yield* fetch((page - 1) * limit, limit));
}
