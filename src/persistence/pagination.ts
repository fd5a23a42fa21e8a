/**
 * Largest `page` of every page-numbered list (a 400 beyond, checked by the route's schema before any SQL):
 * the row offset, (page - 1) × page_size, stays far inside PostgreSQL's bigint and JavaScript's safe integers.
 */
export const MAX_PAGE = 1_000_000;

export interface PageRequest {
  page: number;
  pageSize: number;
}

export interface Pagination {
  page_number: number;
  page_size: number;
  total_count: number;
  total_pages: number;
  next_page?: number;
  previous_page?: number;
}

export function paginate(req: PageRequest, totalCount: number): Pagination {
  const totalPages = Math.ceil(totalCount / req.pageSize);
  return {
    page_number: req.page,
    page_size: req.pageSize,
    total_count: totalCount,
    total_pages: totalPages,
    ...(req.page < totalPages ? { next_page: req.page + 1 } : {}),
    ...(req.page > 1 ? { previous_page: req.page - 1 } : {}),
  };
}

export const skipTake = (req: PageRequest) => ({ skip: (req.page - 1) * req.pageSize, take: req.pageSize });
