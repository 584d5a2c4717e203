-- One page of a sorted set, highest score first, strictly after a position: the index pages of the inbox
-- (merged across partitions by the caller, so a page cursor is a position, never an offset).
-- KEYS[1]: the sorted set. ARGV: the position's score ('' = from the top), its member, how many.
-- Returns member, score pairs (flat).
local key, count = KEYS[1], tonumber(ARGV[3])
if ARGV[1] == '' then
  return redis.call('ZREVRANGE', key, 0, count - 1, 'WITHSCORES')
end
local score, member = tonumber(ARGV[1]), ARGV[2]
local out, offset, batch = {}, 0, count + 16
while #out < 2 * count do
  local rows = redis.call('ZREVRANGEBYSCORE', key, score, '-inf', 'WITHSCORES', 'LIMIT', offset, batch)
  if #rows == 0 then break end
  for i = 1, #rows, 2 do
    -- at the position's own score, members come highest first: skip those not after it
    if tonumber(rows[i + 1]) < score or rows[i] < member then
      out[#out + 1] = rows[i]
      out[#out + 1] = rows[i + 1]
      if #out >= 2 * count then break end
    end
  end
  offset = offset + batch
end
return out
