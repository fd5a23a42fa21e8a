// Where `npm start` finds the repository: every child process runs in REPO_ROOT, the api and the worker
// are started from their compiled entry points in dist/, and the obtain steps run the scripts of tools/.
// This file is compiled to dist/src/cli/start/paths.js, four directories below the repository root.
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');
export const API_MAIN = path.join(REPO_ROOT, 'dist', 'src', 'api', 'main.js');
export const WORKER_MAIN = path.join(REPO_ROOT, 'dist', 'src', 'worker', 'main.js');
export const EMBEDDINGS_MAIN = path.join(REPO_ROOT, 'dist', 'src', 'embeddings', 'main.js');
export const toolScript = (script: string) => path.join(REPO_ROOT, 'tools', script);
