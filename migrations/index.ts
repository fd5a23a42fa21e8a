import { Foundation1763800000000 } from './1763800000000-foundation';
import { CodePlatform1763900000000 } from './1763900000000-code-platform';

/** Every migration, in order; the data source runs these (never `synchronize`). */
export const migrations = [Foundation1763800000000, CodePlatform1763900000000];
