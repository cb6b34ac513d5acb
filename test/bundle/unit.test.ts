// Every unit test file under test/unit/ in one process (it lives in test/bundle/ so that tap, which starts files in
// the order of their paths, starts this long one first). Each file is a module of top-level `t.test()` calls on
// tap's root test, so importing them in turn runs them all here: one Node start (tsx and tap's process tracking
// cost about 1.6 s of CPU per process) instead of one per file, about 170 s of CPU saved on a suite run. A failure
// still names its file (`at: fileName` in its diagnostics), and any file runs alone with `npx tap <file>`. The
// files that spawn processes of their own live in test/unit/processes/ and keep a process each.
import { readdirSync } from 'node:fs';

const dir = new URL('../unit/', import.meta.url);
for (const name of readdirSync(dir).filter((n) => n.endsWith('.test.ts')).sort()) await import(new URL(name, dir).href);
