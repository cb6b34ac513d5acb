// What Piscina loads for a shard worker thread: a CommonJS file, so that the thread never runs require() of an ES
// module. Piscina require()s its worker file first (node_modules/piscina/dist/worker.js, getHandler); on Node 20.19+
// a require() of the ES module workers/shard-worker.ts goes through require(esm), which does not survive its thread
// being terminated mid-load: the whole process aborts (SIGABRT: "Assertion failed: facade->InstantiateModule(...)"
// or "IsGraphAsync must be used on an instantiated module"). A refused start did that whenever it exited while a
// second worker was still loading. Here import() loads the ES module, which a terminated thread simply abandons.
// Piscina awaits an exported promise of the handler before the thread takes tasks (its README, "Delaying
// Availability of Workers").
export = import('./shard-worker.js').then((entry) => entry.default);
