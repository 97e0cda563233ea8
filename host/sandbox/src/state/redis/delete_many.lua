-- Deletes the keys that exist and gives their bytes back to the quota. A
-- bucket left empty is forgotten, and a plugin left with nothing too.
--
-- KEYS: usage, buckets, values, order, plugins
-- ARGV: plugin, bucket, then the keys
-- Returns how many entries were deleted.
local freed, removed = 0, 0
for i = 3, #ARGV do
    local key = ARGV[i]
    if redis.call('HEXISTS', KEYS[3], key) == 1 then
        freed = freed + #key + redis.call('HSTRLEN', KEYS[3], key)
        removed = removed + 1
        redis.call('HDEL', KEYS[3], key)
        redis.call('ZREM', KEYS[4], key)
    end
end
if removed > 0 then
    redis.call('HINCRBY', KEYS[1], 'bytes', -freed)
    redis.call('HINCRBY', KEYS[1], 'keys', -removed)
    if redis.call('EXISTS', KEYS[3]) == 0 then
        redis.call('SREM', KEYS[2], ARGV[2])
        if redis.call('SCARD', KEYS[2]) == 0 then
            redis.call('DEL', KEYS[1])
            redis.call('SREM', KEYS[5], ARGV[1])
        end
    end
end
return removed
