// Held-out corpus `go-stdlib`: the reference documentation of 17 packages of the Go standard library whose
// purposes overlap (strings, bytes, strconv, unicode/utf8, fmt, sort, slices, maps, errors, io, bufio, os, path,
// path/filepath, time, sync, context), as the Go toolchain of this machine prints it (`go doc -all <pkg>`, which
// reads GOROOT's sources offline). Written against go1.26.8 linux/amd64; documents() uses the installed `go`,
// pins GOOS=linux GOARCH=amd64 so that the output depends only on the Go version, and warns when that version
// is not go1.26.8 (the documents then differ a little from the ones the questions were checked against).
// Shape: about 830 short reference entries (about 100 bytes to 16 KB, median about 300 bytes), many of them
// close neighbours (strings.X next to bytes.X, path.X next to filepath.X, sort.X next to slices.X, the
// Print/Sprint/Fprint families of fmt).
// Cut: each package's output is split at its top-level declarations. One document per
//   - package overview (the package comment): `<pkg>`, e.g. `strings`;
//   - function, constructors listed under a type included: `<pkg>.<Func>`, e.g. `strings.Cut`, `bytes.NewReader`;
//   - type, with the const/var blocks go doc lists under it (its values): `<pkg>.<Type>`, e.g. `time.Duration`;
//   - method, each separately: `<pkg>.<Type>.<Method>`, e.g. `bytes.Buffer.WriteString`;
//   - top-level const or var block, named by its first identifier: `<pkg>.<Name>`, e.g. `io.EOF`, `os.O_RDONLY`
//     (so `os.ErrInvalid` is the block that also holds ErrNotExist and ErrPermission).
// `/` in a package path becomes `_` (`path_filepath.Walk`). Names equal but for case get `-2` on the later one
// (`os.File.ReadDir`, `os.File.Readdir-2`) so assets stay distinct on case-insensitive file systems. Every
// document starts with a line naming the entry and its package, then go doc's text verbatim. ext: txt. Sorted
// by name. Nothing is downloaded or cached: the toolchain's own sources are the corpus.
// The questions were written from a reader's side, from reading the documents, without running any retrieval
// or ranking on them; `expected` lists every entry that answers (both strings.X and bytes.X when a question
// does not say which).
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import type { Corpus, Document, Question } from '../corpus';

const run = promisify(execFile);
const GO_VERSION = 'go1.26.8';
const PACKAGES = [
  'bufio',
  'bytes',
  'context',
  'errors',
  'fmt',
  'io',
  'maps',
  'os',
  'path',
  'path/filepath',
  'slices',
  'sort',
  'strconv',
  'strings',
  'sync',
  'time',
  'unicode/utf8',
];
const SECTIONS = new Set(['CONSTANTS', 'VARIABLES', 'FUNCTIONS', 'TYPES', 'BUGS']);

async function go(args: string[]): Promise<string> {
  const bin = process.env.GO ?? 'go';
  // Outside any module (a go.mod could ask for another toolchain); the target pinned so the output is too.
  const env = { ...process.env, GOOS: 'linux', GOARCH: 'amd64', GOTOOLCHAIN: 'local', GOFLAGS: '', GOWORK: 'off' };
  try {
    const { stdout } = await run(bin, args, { env, cwd: os.tmpdir(), maxBuffer: 64 << 20 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new Error(
        `go-stdlib corpus: the Go toolchain (\`${bin}\`) was not found; install Go (written against ${GO_VERSION}), ` +
          'put it on PATH or set GO to its binary',
      );
    }
    throw new Error(`go-stdlib corpus: \`go ${args.join(' ')}\` failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** The first identifier declared by a const/var block (`const X = ...` or the first line inside `const (`). */
function firstName(lines: string[]): string {
  const head = lines[0].replace(/^(const|var)\s+/, '');
  if (!head.startsWith('(')) return head.match(/^\w+/)![0];
  for (const line of lines.slice(1)) {
    const m = line.match(/^\t(\w+)/);
    if (m) return m[1];
  }
  throw new Error(`go-stdlib corpus: no name in block ${lines[0]}`);
}

function cut(pkg: string, out: string): Document[] {
  const base = pkg.replaceAll('/', '_');
  const lines = out.replace(/\s+$/, '').split('\n');
  const first = lines.findIndex((l) => SECTIONS.has(l));
  const docs: Document[] = [];
  const add = (name: string, what: string, body: string[]) => {
    const text = `${name}: ${what}, Go package ${pkg} (import "${pkg}")\n\n${body.join('\n').trim()}\n`;
    docs.push({ name, ext: 'txt', text });
  };
  add(base, 'package overview', lines.slice(0, first < 0 ? lines.length : first));
  // Blocks start at column 0 with a keyword; their bodies are indented, blank, or a closing ) or }.
  const blocks: { section: string; lines: string[] }[] = [];
  let section = '';
  for (const line of lines.slice(first < 0 ? lines.length : first)) {
    if (SECTIONS.has(line)) section = line;
    else if (/^(func|type|const|var) /.test(line)) blocks.push({ section, lines: [line] });
    else if (blocks.length) blocks[blocks.length - 1].lines.push(line);
  }
  let type: { name: string; body: string[] } | undefined;
  const flush = () => {
    if (type) add(`${base}.${type.name}`, `type ${type.name}`, type.body);
    type = undefined;
  };
  for (const b of blocks) {
    const head = b.lines[0];
    if (b.section === 'BUGS') continue;
    if (head.startsWith('type ')) {
      flush();
      type = { name: head.match(/^type (\w+)/)![1], body: [...b.lines] };
    } else if (head.startsWith('func (')) {
      const m = head.match(/^func \(\w*\s*\*?(\w+)[^)]*\) (\w+)/);
      if (!m) throw new Error(`go-stdlib corpus: cannot parse method ${head}`);
      add(`${base}.${m[1]}.${m[2]}`, `method ${m[2]} of type ${m[1]}`, b.lines);
    } else if (head.startsWith('func ')) {
      const fn = head.match(/^func (\w+)/)![1];
      add(`${base}.${fn}`, `function ${fn}`, b.lines);
    } else if (b.section === 'TYPES' && type) {
      type.body.push('', ...b.lines);
    } else {
      const id = firstName(b.lines);
      add(`${base}.${id}`, `${head.split(' ')[0]} ${id}${head.includes('(') ? ' and others' : ''}`, b.lines);
    }
  }
  flush();
  return docs;
}

const QUESTIONS: Question[] = [
  // strings and bytes
  {
    question: 'split a key=value string at the first equals sign into the key and the value',
    expected: ['strings.Cut', 'strings.SplitN'],
  },
  {
    question: 'TrimLeft with "abc" also ate other leading letters; how do I remove exactly one prefix string?',
    expected: ['strings.TrimLeft', 'strings.TrimPrefix', 'strings.CutPrefix'],
  },
  {
    question: 'how many times does a word occur in a piece of text, not counting overlaps',
    expected: ['strings.Count', 'bytes.Count'],
  },
  {
    question: 'go through each line of a multi-line string in memory without first building a slice of all lines',
    expected: ['strings.Lines', 'strings.SplitSeq', 'strings.SplitAfterSeq'],
  },
  {
    question: 'cheap way to assemble a long string from many small pieces in a loop instead of concatenating with +=',
    expected: ['strings.Builder', 'strings.Builder.WriteString'],
  },
  {
    question: 'escape <, > and & in a string in a single pass, replacing each with its own substitute',
    expected: ['strings.NewReplacer', 'strings.Replacer', 'strings.Replacer.Replace'],
  },
  {
    question: 'Is there a built-in way to capitalise the first letter of every word, and should I still use it?',
    expected: ['strings.Title', 'bytes.Title'],
  },
  { question: 'compare two strings for equality ignoring upper and lower case', expected: ['strings.EqualFold'] },
  { question: 'drop the blanks and newlines at both ends of a []byte', expected: ['bytes.TrimSpace'] },
  // strconv, unicode/utf8
  {
    question: 'turn the text "42" into an int and detect input that is not a number',
    expected: ['strconv.Atoi', 'strconv.ParseInt'],
  },
  {
    question: 'convert a float64 to a string with exactly two digits after the decimal point',
    expected: ['strconv.FormatFloat', 'fmt', 'fmt.Sprintf'],
  },
  {
    question: 'get a double-quoted copy of a string with control characters escaped the way Go source writes them',
    expected: ['strconv.Quote', 'fmt'],
  },
  {
    question: 'len() of my string with accented letters is more than the characters I see; how do I count characters?',
    expected: ['unicode_utf8.RuneCountInString'],
  },
  // fmt
  { question: 'print a struct value so that the output also shows the name of each field', expected: ['fmt'] },
  { question: 'my printed output contains odd text like %!s(int=5) — what went wrong?', expected: ['fmt'] },
  {
    question: 'add printf-style formatted text to the end of an existing []byte without making a string first',
    expected: ['fmt.Appendf'],
  },
  {
    question: 'make values of my own type show up as custom text when printed with Println or %v',
    expected: ['fmt.Stringer', 'fmt.Formatter', 'fmt'],
  },
  // sort, slices, maps
  {
    question: 'sort a []int in increasing order with one call and no comparison function',
    expected: ['slices.Sort', 'sort.Ints'],
  },
  {
    question: 'order records by one field while records with the same value keep the order they had before',
    expected: ['slices.SortStableFunc', 'sort.SliceStable', 'sort.Stable', 'sort.Slice'],
  },
  {
    question:
      'with the generic slice helpers, find where a value belongs in an already sorted slice and whether it is there',
    expected: ['slices.BinarySearch', 'slices.BinarySearchFunc'],
  },
  {
    question: 'remove consecutive duplicate values from a slice',
    expected: ['slices.Compact', 'slices.CompactFunc'],
  },
  { question: 'get the keys of a map as a sorted slice', expected: ['maps.Keys', 'slices.Sorted'] },
  // errors
  {
    question: 'check whether an error, possibly wrapped several layers deep, is one particular sentinel error',
    expected: ['errors.Is'],
  },
  {
    question: 'get hold of my custom error struct when it is wrapped inside another error',
    expected: ['errors.As', 'errors.AsType'],
  },
  { question: 'return several errors together as one error value', expected: ['errors.Join', 'fmt.Errorf'] },
  // os
  {
    question: 'after opening a file fails, how can I tell that the file simply is not there?',
    expected: ['os.IsNotExist', 'os.ErrInvalid'],
  },
  {
    question: 'which flags open a log file for appending and create it when it does not exist yet',
    expected: ['os.OpenFile', 'os.O_RDONLY'],
  },
  {
    question: 'create a directory together with any missing parent directories',
    expected: ['os.MkdirAll', 'os.Root.MkdirAll'],
  },
  {
    question: 'tell apart an environment variable that is set but empty from one that is not set at all',
    expected: ['os.LookupEnv', 'os.Getenv'],
  },
  { question: 'my deferred cleanup did not run when the program quit with a non-zero status', expected: ['os.Exit'] },
  // io, bufio
  {
    question: 'send the same output to a log file and to the terminal at the same time',
    expected: ['io.MultiWriter'],
  },
  {
    question: 'reading lines with a scanner stops with "token too long" on a huge line; how do I allow longer lines?',
    expected: ['bufio.Scanner.Buffer', 'bufio.MaxScanTokenSize', 'bufio.Scanner'],
  },
  {
    question: 'the file I wrote through a buffered writer is empty or cut short at the end',
    expected: ['bufio.Writer', 'bufio.Writer.Flush'],
  },
  // path, path/filepath
  {
    question: 'join a directory and a file name with the separator of the operating system the program runs on',
    expected: ['path_filepath.Join'],
  },
  {
    question: 'Which package handles URL-style slash paths and which one handles Windows file names?',
    expected: ['path', 'path_filepath'],
  },
  { question: 'get the extension of a file name, like .txt', expected: ['path.Ext', 'path_filepath.Ext'] },
  {
    question: 'visit every file and folder below a directory, recursively',
    expected: ['path_filepath.WalkDir', 'path_filepath.Walk'],
  },
  // time
  { question: 'read a setting like 1h30m from a config file as a length of time', expected: ['time.ParseDuration'] },
  {
    question: 'print a timestamp in RFC 3339 form',
    expected: ['time.Time.Format', 'time.Layout', 'time.Time.AppendFormat'],
  },
  { question: 'why does adding one month to January 31 give a date in March?', expected: ['time.Time.AddDate'] },
  {
    question:
      'a date string without a zone is read as UTC but was written in local time; how to read it in a given zone?',
    expected: ['time.ParseInLocation', 'time.Parse'],
  },
  // sync, context
  {
    question: 'wait until a batch of goroutines have all finished',
    expected: ['sync.WaitGroup', 'sync.WaitGroup.Wait', 'sync.WaitGroup.Go'],
  },
  {
    question:
      'run an expensive setup only on the first call, every later call from any goroutine getting the same result',
    expected: ['sync.OnceValue', 'sync.OnceValues', 'sync.Once.Do'],
  },
  {
    question: 'give up on an operation automatically if it has not finished after five seconds',
    expected: ['context.WithTimeout', 'context.WithTimeoutCause', 'context.WithDeadline', 'context.WithDeadlineCause'],
  },
  {
    question: 'what type should the key have when attaching a request-scoped value to a context?',
    expected: ['context.WithValue'],
  },
];

export const corpus: Corpus = {
  name: 'go-stdlib',
  description:
    'Go standard library reference (go1.26.8 `go doc -all`, linux/amd64) for 17 overlapping packages: strings, ' +
    'bytes, strconv, unicode/utf8, fmt, sort, slices, maps, errors, io, bufio, os, path, path/filepath, time, ' +
    'sync, context. Many short entries, one per package overview, function, type, method and const/var block, ' +
    'named <pkg>.<Symbol> (strings.Cut, bytes.Buffer.WriteString, path_filepath.Walk); close neighbours compete.',
  role: 'held-out',
  async documents(): Promise<Document[]> {
    const version = (await go(['env', 'GOVERSION'])).trim();
    if (version !== GO_VERSION) {
      console.warn(`go-stdlib corpus: written against ${GO_VERSION}, reading ${version}; entries may differ`);
    }
    const docs: Document[] = [];
    for (const pkg of PACKAGES) docs.push(...cut(pkg, await go(['doc', '-all', pkg])));
    const byName = (a: Document, b: Document) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    docs.sort(byName);
    for (let i = 1; i < docs.length; i++) {
      if (docs[i].name === docs[i - 1].name) throw new Error(`go-stdlib corpus: duplicate name ${docs[i].name}`);
    }
    const seen = new Map<string, number>();
    for (const doc of docs) {
      const key = doc.name.toLowerCase();
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      if (n > 1) doc.name = `${doc.name}-${n}`;
    }
    return docs.sort(byName);
  },
  questions: QUESTIONS,
};
