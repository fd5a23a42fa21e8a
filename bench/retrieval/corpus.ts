// A corpus of the retrieval-quality benchmark (bench/retrieval-quality.ts): public reference text no one here
// wrote, shipped by a package or a toolchain of this machine, and questions written from a reader's side, each
// naming the documents that answer it. One corpus (coreutils) is where settings are chosen; the others are
// held out: they are measured and reported, never tuned on.

export interface Question {
  question: string;
  /** Names of the documents (Document.name) any of which answers it. */
  expected: string[];
}

export interface Document {
  /** Unique in the corpus; the asset is `<corpus>/<name>.<ext>`. */
  name: string;
  /** How the platform reads it: plain text, HTML or Markdown. */
  ext: 'txt' | 'html' | 'md';
  text: string;
}

export interface Corpus {
  /** Short and path-safe: `coreutils`, `git`, `go-stdlib`, `postgres-docs`. */
  name: string;
  /** Where it comes from and its shape (long documents, short entries, prose and tables). */
  description: string;
  /** `tuning`: settings are chosen on it; `held-out`: only reported. */
  role: 'tuning' | 'held-out';
  /** The documents, read from this machine (obtaining a package first when needed). */
  documents(): Promise<Document[]>;
  questions: Question[];
}
