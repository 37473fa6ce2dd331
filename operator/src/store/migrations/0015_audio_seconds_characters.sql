-- Audio billed by the second (whisper-1 transcriptions) and speech billed by the character (tts-1).
-- Usage records carry the seconds heard (null where none are billed or the answer did not say) and
-- the characters of input; model price overrides gain a price per character (USD).
ALTER TABLE usage_logs ADD COLUMN audio_seconds double precision;
ALTER TABLE usage_logs ADD COLUMN input_characters bigint NOT NULL DEFAULT 0;
ALTER TABLE model_prices ADD COLUMN per_character double precision CHECK (per_character >= 0);
