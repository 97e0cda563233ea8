-- Adds a delta to the counter at a key (0 when absent), within the quota.
-- A counter is a u64 in decimal digits, as the SQLite backend keeps it; the
-- sum is done on the digits, because Lua's numbers are doubles and lose
-- precision past 2^53.
--
-- KEYS: usage, buckets, seq, values, order, plugins
-- ARGV: quota, plugin, bucket, key, delta (decimal digits)
-- Returns {'ok', new value}, {'not-a-counter'}, {'overflow'} or
-- {'quota', used, needed}.
local MAX = '18446744073709551615'

local function too_big(digits)
    return #digits > #MAX or (#digits == #MAX and digits > MAX)
end

local function add(a, b)
    local digits, carry = {}, 0
    local i, j = #a, #b
    while i > 0 or j > 0 or carry > 0 do
        local d = carry
        if i > 0 then d = d + string.byte(a, i) - 48; i = i - 1 end
        if j > 0 then d = d + string.byte(b, j) - 48; j = j - 1 end
        table.insert(digits, 1, string.char(48 + d % 10))
        carry = math.floor(d / 10)
    end
    return table.concat(digits)
end

local quota, key = tonumber(ARGV[1]), ARGV[4]
local old = redis.call('HGET', KEYS[4], key)
local current = '0'
if old then
    if not string.find(old, '^%d+$') then
        return {'not-a-counter'}
    end
    current = string.gsub(old, '^0+', '')
    if current == '' then current = '0' end
    if too_big(current) then
        return {'not-a-counter'}
    end
end
local new = add(current, ARGV[5])
if too_big(new) then
    return {'overflow'}
end
local used = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local before = 0
if old then before = #key + #old end
local after = used - before + #key + #new
if after > quota and after > used then
    return {'quota', used, after - used}
end
redis.call('HSET', KEYS[4], key, new)
if not old then
    redis.call('ZADD', KEYS[5], redis.call('INCR', KEYS[3]), key)
    redis.call('HINCRBY', KEYS[1], 'keys', 1)
end
redis.call('HINCRBY', KEYS[1], 'bytes', after - used)
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[6], ARGV[2])
return {'ok', new}
