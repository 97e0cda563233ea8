-- Deletes everything a plugin keeps (UNLINK: Redis frees large buckets in
-- the background instead of blocking every client).
--
-- KEYS: usage, buckets, seq, plugins
-- ARGV: plugin, the prefix of its buckets' keys
-- Returns how many entries were deleted.
local removed = 0
for _, bucket in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    local values = ARGV[2] .. 'v:' .. bucket
    removed = removed + redis.call('HLEN', values)
    redis.call('UNLINK', values, ARGV[2] .. 'o:' .. bucket)
end
redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3])
redis.call('SREM', KEYS[4], ARGV[1])
return removed
