/** Where things are, resolved from the compiled file (dist/bench/lib/) so the bench runs from any cwd. */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
/** QUILL_BENCH_MAIN points the bench at another build (e.g. to compare a patched copy with this tree). */
export const QUILL_MAIN = process.env.QUILL_BENCH_MAIN ?? join(ROOT, 'dist/src/main.js');
export const HELLO_WORLD = join(ROOT, 'dist/bench/hello-world-server.js');
/** Lua scripts are not compiled; they are read from the source tree. */
export const LUA_DIR = join(ROOT, 'bench/lua');
export const RESULTS_DIR = join(ROOT, 'bench/results');

/** Fixed keys so every run's fixtures look the same (they only apply to a fresh data directory). */
export const PROJECT_KEY = 'phc_benchprojectkey000000000000000000000000000';
export const PERSONAL_KEY = 'phx_benchpersonalkey00000000000000000000000000';
