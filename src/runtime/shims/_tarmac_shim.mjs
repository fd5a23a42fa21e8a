// What both Node.js shims share (written beside them into the run's HOME, under a name no user module is
// likely to have): the result pipe and loading the user's file.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Writes `text` to the result pipe `resultFd` and closes it. Past the platform's result limit the pipe is
 * closed on the other side: the write fails (EPIPE) and the run ends ResultTooLarge.
 */
export function writeResult(resultFd, text) {
  const bytes = Buffer.from(text);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let written = 0; written < bytes.length;) {
    try {
      written += fs.writeSync(resultFd, bytes, written);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(pause, 0, 0, 5); // the platform reads as it arrives
    }
  }
  fs.closeSync(resultFd);
}

/** Writes {"error": {type, message}} as the result and exits with `code`. */
export function fail(resultFd, code, type, message) {
  writeResult(resultFd, JSON.stringify({ error: { type, message } }));
  process.exit(code);
}

/** `err` as `<name>: <message>`, the way a load error is reported. */
export function describeError(err) {
  return `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
}

/** Imports `file` (CommonJS or ES module, relative to the working directory). */
export function loadModule(file) {
  return import(pathToFileURL(path.resolve(file)).href);
}

/** The export `name` of a module: an ES export, or a property of a CommonJS module's module.exports. */
export function exported(mod, name) {
  return mod[name] ?? mod.default?.[name] ?? (name === 'default' ? mod.default : undefined);
}
