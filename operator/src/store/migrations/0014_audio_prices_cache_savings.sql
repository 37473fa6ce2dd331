-- Audio tokens at their own price, and what cache hits saved.
-- Model price overrides gain per-audio-token prices (USD per token: input, output, cached input).
ALTER TABLE model_prices ADD COLUMN audio_input double precision CHECK (audio_input >= 0);
ALTER TABLE model_prices ADD COLUMN audio_output double precision CHECK (audio_output >= 0);
ALTER TABLE model_prices ADD COLUMN cached_audio_input double precision CHECK (cached_audio_input >= 0);
-- Usage records carry the audio tokens among their input, cached input and output tokens, and a
-- cache hit (cost 0) the USD its stored answer first cost: the cache hit-rate graph sums it.
ALTER TABLE usage_logs ADD COLUMN audio_input_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_logs ADD COLUMN cached_audio_input_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_logs ADD COLUMN audio_output_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_logs ADD COLUMN cache_saved_cost_usd double precision;
