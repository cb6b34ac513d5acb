-- /batch/ with CONFIG.events_per_request events per request (after events.lua).
local head = '{"api_key":"' .. CONFIG.api_key .. '","batch":['
local headers = { ["Content-Type"] = "application/json" }
local n = CONFIG.events_per_request
local parts = {}

function request()
  local ts = now_iso()
  for i = 1, n do parts[i] = event_json(ts) end
  local body = head .. table.concat(parts, ",", 1, n) .. '],"sent_at":"' .. ts .. '"}'
  return wrk.format("POST", CONFIG.path, headers, body)
end
