// Questions for the retrieval-quality benchmark (bench/retrieval-quality.ts), written from a reader's side:
// what someone who does not know the command's name would ask. Each names the manual pages that answer it
// (GNU coreutils 9.x as Debian ships them; `dir` and `vdir` are `ls` under other names, so all three count).
export interface Question {
  question: string;
  /** Page names (without `.txt`) any of which answers it. */
  expected: string[];
}

const LS = ['ls', 'dir', 'vdir'];

export const QUESTIONS: Question[] = [
  { question: 'How do I sort lines numerically instead of alphabetically?', expected: ['sort'] },
  { question: 'show only the first few lines of a file', expected: ['head'] },
  { question: 'keep watching a log file and print new lines as they are appended', expected: ['tail'] },
  { question: 'How can I count the number of lines and words in a file?', expected: ['wc'] },
  { question: 'remove repeated adjacent lines from sorted input', expected: ['uniq'] },
  { question: 'change which user owns a file', expected: ['chown'] },
  { question: 'make a script executable by changing its permission bits', expected: ['chmod'] },
  { question: 'How much free disk space is left on each mounted file system?', expected: ['df'] },
  { question: 'how much space does a directory take up in total', expected: ['du'] },
  { question: 'create a nested directory including any missing parent directories', expected: ['mkdir'] },
  { question: 'make a symbolic link pointing to another file', expected: ['ln'] },
  { question: 'print the current date and time in ISO 8601 format', expected: ['date'] },
  { question: 'pause a shell script for a number of seconds', expected: ['sleep'] },
  { question: 'break a large file into smaller pieces of a fixed size', expected: ['split', 'csplit'] },
  { question: 'compute the SHA-256 checksum of a file to verify a download', expected: ['sha256sum'] },
  { question: 'extract the second column from comma separated lines', expected: ['cut'] },
  { question: 'convert lowercase letters to uppercase in a stream', expected: ['tr'] },
  { question: 'merge lines of two files that share a common key field', expected: ['join'] },
  { question: 'which directory am I in right now?', expected: ['pwd'] },
  { question: "update a file's modification time without changing its contents", expected: ['touch'] },
  { question: 'run a command but kill it if it runs for too long', expected: ['timeout'] },
  { question: 'print a sequence of numbers from one to ten', expected: ['seq'] },
  { question: 'add line numbers in front of each line of a file', expected: ['nl', 'cat'] },
  { question: 'print the lines of a file in reverse order, last line first', expected: ['tac'] },
  { question: 'shuffle lines into a random order', expected: ['shuf'] },
  { question: 'show my numeric user id and the groups I belong to', expected: ['id', 'groups'] },
  { question: 'how many processing units can this process use?', expected: ['nproc'] },
  { question: 'overwrite a file repeatedly so its contents cannot be recovered', expected: ['shred'] },
  { question: 'encode binary data as base64 text and decode it back', expected: ['base64', 'basenc'] },
  { question: 'start a program with a lower scheduling priority', expected: ['nice'] },
  { question: 'print the kernel name and the machine hardware name', expected: ['uname', 'arch'] },
  { question: 'copy a file while preserving its timestamps and ownership', expected: ['cp', 'install'] },
  { question: 'rename a file or move it into another directory', expected: ['mv'] },
  { question: 'delete a directory and everything inside it recursively', expected: ['rm'] },
  { question: 'wrap long lines so that none is wider than a given width', expected: ['fold', 'fmt'] },
  { question: 'strip the leading directories from a path and keep only the file name', expected: ['basename'] },
  { question: 'compare two sorted files and show lines unique to each', expected: ['comm'] },
  { question: 'print the value of an environment variable', expected: ['printenv', 'env'] },
  { question: 'shrink or extend a file to a specific size', expected: ['truncate'] },
  { question: 'create a temporary file with a unique name safely', expected: ['mktemp'] },
  { question: 'list files sorted by modification time, newest first', expected: LS },
  { question: 'replace tab characters with spaces', expected: ['expand'] },
  { question: "show a file's inode number, size and access times", expected: ['stat'] },
  { question: 'write output to a file and to the terminal at the same time', expected: ['tee'] },
  { question: 'resolve a path to its absolute canonical form following symlinks', expected: ['realpath', 'readlink'] },
  { question: 'convert a number of bytes into a human readable size like 1.5M', expected: ['numfmt'] },
  { question: 'find the prime factors of a number', expected: ['factor'] },
  { question: 'keep a command running after I log out of the terminal', expected: ['nohup'] },
  { question: 'display the bytes of a binary file in hexadecimal', expected: ['od'] },
  { question: 'put lines of several files side by side separated by tabs', expected: ['paste'] },
];
