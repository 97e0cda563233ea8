-- The size and the first bytes of each key's value, for `corral state
-- list`: a preview, so that listing a plugin with large values moves only
-- what is shown.
--
-- KEYS: values (hash: key -> value)
-- ARGV: preview length, then the keys
-- Returns {size, preview, size, preview...} (size -1 for a key gone since).
local shown = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
    local value = redis.call('HGET', KEYS[1], ARGV[i])
    if value then
        table.insert(out, #value)
        table.insert(out, string.sub(value, 1, shown))
    else
        table.insert(out, -1)
        table.insert(out, '')
    end
end
return out
