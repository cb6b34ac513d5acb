-- Rate limiting for wrk (which has none): each connection waits a random, exponentially distributed time
-- between a response and its next request (Poisson arrivals per connection), mean CONFIG.delay_ms. wrk takes
-- whole milliseconds, so the wait is rounded up or down at random to keep the mean exact.
local mean = CONFIG.delay_ms

function delay()
  local d = -mean * math.log(1 - math.random())
  local whole = math.floor(d)
  if math.random() < d - whole then whole = whole + 1 end
  return whole
end
