-- A prompt's fields with its record, read in one step (the two keys are never seen half-expired).
-- ARGV: pid
return prompt_fields(ARGV[1])
