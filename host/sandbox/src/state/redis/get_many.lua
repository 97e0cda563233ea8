-- The values of the keys, or {'too-large'} when together they pass the
-- budget: measured here (HSTRLEN) before anything is sent, so that a batch
-- read never brings more than the budget into the host.
--
-- KEYS: values (hash: key -> value)
-- ARGV: budget, then the keys (at least one)
-- Returns {'ok', {value or nil, ...}} or {'too-large'}.
local budget = tonumber(ARGV[1])
local total = 0
for i = 2, #ARGV do
    total = total + redis.call('HSTRLEN', KEYS[1], ARGV[i])
    if total > budget then
        return {'too-large'}
    end
end
return {'ok', redis.call('HMGET', KEYS[1], unpack(ARGV, 2))}
