-- wrk driver for scripts/soak.py: POSTs the JSON bodies of a file (one per line) in turn,
-- counts responses per status, and prints one `SOAKJSON {...}` line when done.
--
--   wrk -t1 -c4 -d30s --timeout 30s -s scripts/soak/rotate.lua http://127.0.0.1:8000 -- \
--       /v1/chat/completions/render bodies.jsonl [LINES_PER_CYCLE]
--
-- A body may hold the placeholder __NONCE__ (inside a JSON string): it is replaced by
-- words that differ per request (the prompt is new to the prompt cache; its words are not
-- new to the segment cache, as in real traffic). With LINES_PER_CYCLE (multi-turn
-- conversations: the turns of one conversation in order), the nonce is the same for every
-- line of one pass over the file, so each pass is a new conversation whose turns extend
-- each other.

local path, bodies, per_cycle
local counter = 0
local offset = 0
statuses = {}

local nonce_words = {"amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
                     "indigo", "juniper", "kestrel", "lagoon", "meadow", "nectar", "onyx", "pepper"}

local function nonce(n)
  local out = {}
  repeat
    out[#out + 1] = nonce_words[(n % 16) + 1]
    n = math.floor(n / 16)
  until n == 0
  return table.concat(out, " ")
end

function init(args)
  path = args[1]
  per_cycle = tonumber(args[3] or "0")
  bodies = {}
  for line in io.lines(args[2]) do
    if #line > 0 then
      local a, b = line:find("__NONCE__", 1, true)
      if a then
        bodies[#bodies + 1] = {line:sub(1, a - 1), line:sub(b + 1)}
      else
        bodies[#bodies + 1] = wrk.format("POST", path, {["Content-Type"] = "application/json"}, line)
      end
    end
  end
  -- Runs start at different places of the file and with other nonces.
  math.randomseed(os.time())
  offset = math.random(0, 1000000)
  if per_cycle == 0 then counter = math.random(#bodies) end
end

function request()
  local i = counter % #bodies
  local body = bodies[i + 1]
  local n = (per_cycle > 0) and math.floor(counter / #bodies) or counter
  counter = counter + 1
  if type(body) == "string" then
    return body
  end
  return wrk.format("POST", path, {["Content-Type"] = "application/json"},
                    body[1] .. nonce(n + offset) .. body[2])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
end

function done(summary, latency, requests)
  local by_status = {}
  for _, t in ipairs(threads) do
    local s = t:get("statuses")
    if s then
      for code, n in pairs(s) do
        by_status[code] = (by_status[code] or 0) + n
      end
    end
  end
  local parts = {}
  for code, n in pairs(by_status) do
    parts[#parts + 1] = string.format('"%d": %d', code, n)
  end
  local e = summary.errors
  io.write(string.format(
    'SOAKJSON {"requests": %d, "duration_us": %d, "bytes": %d, "statuses": {%s}, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"p50": %d, "p90": %d, "p99": %d, "max": %d, "mean": %.1f}}\n',
    summary.requests, summary.duration, summary.bytes, table.concat(parts, ", "),
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
