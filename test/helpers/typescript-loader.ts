// The `--import` arguments through which tap loads this test file's TypeScript (tsx, from package.json's tap
// "node-arg"), so a child process started on a `.ts` fixture loads it the same way.
export const TYPESCRIPT_LOADER_ARGS: string[] = process.execArgv.filter((arg) => arg.startsWith('--import') && /tsx|typescript/.test(arg));
