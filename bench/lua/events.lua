-- posthog-node-shaped events (see bench/lib/event-shapes.ts, which builds the property sets and passes them in
-- CONFIG.fragments). Every event gets a unique uuid: CONFIG.run (8 hex digits, new for every wrk run) + this
-- thread's number + a counter, so nothing sent is ever deduplicated by the server.
local fragments = CONFIG.fragments
local names = CONFIG.names
local ids = CONFIG.distinct_ids
local lib = CONFIG.lib
local counter = 0
local thread_no = 0

function setup(thread)
  thread_count = (thread_count or 0) + 1
  thread:set("thread_no", thread_count)
end

function init(args)
  thread_no = _G.thread_no or 0
end

function next_uuid()
  counter = counter + 1
  return string.format("%s-%04x-4000-8000-%012x", CONFIG.run, thread_no, counter)
end

function now_iso()
  return os.date("!%Y-%m-%dT%H:%M:%S") .. ".000Z"
end

function event_json(ts)
  return '{"event":"' .. names[math.random(#names)] ..
    '","distinct_id":"user-' .. math.random(ids) ..
    '","properties":{' .. fragments[math.random(#fragments)] ..
    '},' .. lib .. ',"timestamp":"' .. ts .. '","uuid":"' .. next_uuid() .. '"}'
end
