// Reads scoped to the caller's organization: another organization's record is "not found", never visible.
import { DataSource, EntityTarget, FindOptionsOrder, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { notFound } from '../api/http/errors';
import { PageRequest, paginate, Pagination, skipTake } from '../api/http/pagination';

type OrgOwned = ObjectLiteral & { organization_id: string };

export async function findInOrg<T extends OrgOwned>(
  ds: DataSource,
  entity: EntityTarget<T>,
  organizationId: string,
  where: FindOptionsWhere<T>,
  what: string,
): Promise<T> {
  const row = await ds.getRepository(entity).findOneBy({ ...where, organization_id: organizationId } as FindOptionsWhere<T>);
  if (!row) throw notFound(what);
  return row;
}

export async function pageInOrg<T extends OrgOwned>(
  ds: DataSource,
  entity: EntityTarget<T>,
  organizationId: string,
  page: PageRequest,
  where: FindOptionsWhere<T> = {},
  order: FindOptionsOrder<T> = { created_at: 'DESC' } as unknown as FindOptionsOrder<T>,
): Promise<{ items: T[]; pagination: Pagination }> {
  const [items, total] = await ds.getRepository(entity).findAndCount({
    where: { ...where, organization_id: organizationId } as FindOptionsWhere<T>,
    order,
    ...skipTake(page),
  });
  return { items, pagination: paginate(page, total) };
}

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
