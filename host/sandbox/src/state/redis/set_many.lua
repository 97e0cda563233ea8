-- Writes every entry of a batch, or none when the plugin would then keep
-- more than its quota. Run atomically by Redis, so the usage it reads is
-- the usage it writes.
--
-- KEYS: usage (hash: bytes, keys), buckets (set), seq (counter),
--       values (hash: key -> value), order (sorted set: key -> seq),
--       plugins (set)
-- ARGV: quota, plugin, bucket, then key, value, key, value...
-- Returns {'ok'} or {'quota', used, needed}.
local quota = tonumber(ARGV[1])
local used = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local after = used
local size = {}
for i = 4, #ARGV, 2 do
    local key, value = ARGV[i], ARGV[i + 1]
    local before = size[key]
    if before == nil then
        before = 0
        if redis.call('HEXISTS', KEYS[4], key) == 1 then
            before = #key + redis.call('HSTRLEN', KEYS[4], key)
        end
    end
    size[key] = #key + #value
    after = after - before + size[key]
end
if after > quota and after > used then
    return {'quota', used, after - used}
end
local added = 0
for i = 4, #ARGV, 2 do
    local key = ARGV[i]
    redis.call('HSET', KEYS[4], key, ARGV[i + 1])
    -- A key keeps its place in listings when its value changes.
    if not redis.call('ZSCORE', KEYS[5], key) then
        redis.call('ZADD', KEYS[5], redis.call('INCR', KEYS[3]), key)
        added = added + 1
    end
end
redis.call('HINCRBY', KEYS[1], 'bytes', after - used)
redis.call('HINCRBY', KEYS[1], 'keys', added)
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[6], ARGV[2])
return {'ok'}
