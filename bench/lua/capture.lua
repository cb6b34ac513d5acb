-- /capture/ with one event per request (after events.lua).
local head = '{"api_key":"' .. CONFIG.api_key .. '",'
local headers = { ["Content-Type"] = "application/json" }

function request()
  local e = event_json(now_iso())
  return wrk.format("POST", CONFIG.path, headers, head .. string.sub(e, 2))
end
