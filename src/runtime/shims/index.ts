// The programs that run one function or tool invocation, real files beside this module (the build copies
// them into dist/, see package.json). A run writes its runtime's shim and the shim's companions into its
// private HOME and runs it:
//   <interpreter> <shim> <main_file> <handler_name> <input_json_file> <result_fd>   (functions)
//   <interpreter> <shim> <init_tool_file> <init_tool_function> <result_fd> describe | run <activity> <params>   (tools)
// Exit codes: 0 ok, 1 the handler raised, 2 it could not be loaded. The shim writes the JSON result, or
// {"error": {type, message}}, to the pipe <result_fd> (RESULT_FD, src/runtime/process/result-channel.ts).
import fs from 'node:fs';
import path from 'node:path';

/** Exit code of a shim whose handler could not be loaded (missing file, syntax error, no such function). */
export const SHIM_LOAD_ERROR_EXIT = 2;

export interface ShimFile {
  fileName: string;
  source: string;
}

/** The shim to run first, then the files it needs beside it. */
export type Shim = [main: ShimFile, ...companions: ShimFile[]];

const cache = new Map<string, string>();
const read = (fileName: string): ShimFile => {
  if (!cache.has(fileName)) cache.set(fileName, fs.readFileSync(path.join(__dirname, fileName), 'utf8'));
  return { fileName, source: cache.get(fileName)! };
};

/** The function shim of `runtime` (the .mjs extension makes node treat it as an ES module). */
export function functionShim(runtime: 'python3' | 'nodejs'): Shim {
  return runtime === 'python3'
    ? [read('function_runner.py'), read('_tarmac_shim.py')]
    : [read('function_runner.mjs'), read('_tarmac_shim.mjs')];
}

/** The tool shim of `runtime`. */
export function toolShim(runtime: 'python3' | 'nodejs'): Shim {
  return runtime === 'python3'
    ? [read('tool_runner.py'), read('_tarmac_shim.py')]
    : [read('tool_runner.mjs'), read('_tarmac_shim.mjs')];
}
