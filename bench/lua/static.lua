-- One fixed request (GET or POST with a fixed body): wrk builds it once, the cheapest way to drive load.
-- CONFIG = { method, body?, headers = {...} } is prepended by bench/lib/wrk.ts.
wrk.method = CONFIG.method
if CONFIG.body then wrk.body = CONFIG.body end
for name, value in pairs(CONFIG.headers or {}) do wrk.headers[name] = value end
