-- /flags/?v=2 as posthog-node asks it, for a distinct id drawn at random from CONFIG.persons stored persons
-- (`flags-user-<n>`), so the answers need a person lookup each, as a real population's do.
local head = '{"api_key":"' .. CONFIG.api_key .. '","distinct_id":"flags-user-'
local headers = { ["Content-Type"] = "application/json" }
local persons = CONFIG.persons

function request()
  return wrk.format("POST", "/flags/?v=2", headers, head .. math.random(0, persons - 1) .. '"}')
end
