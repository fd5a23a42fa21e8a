// The corpora of the retrieval-quality benchmark: coreutils is where settings are chosen; the rest are held out.
import type { Corpus } from '../corpus';
import { corpus as coreutils } from './coreutils';
import { corpus as git } from './git';
import { corpus as goStdlib } from './go-stdlib';
import { corpus as postgresDocs } from './postgres-docs';

export const CORPORA: Corpus[] = [coreutils, git, goStdlib, postgresDocs];
