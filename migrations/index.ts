import { Foundation1763800000000 } from './1763800000000-foundation';

/** Every migration, in order; the data source runs these (never `synchronize`). */
export const migrations = [Foundation1763800000000];
