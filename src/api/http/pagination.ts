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
