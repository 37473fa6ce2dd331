-- Images billed by the image (DALL·E) or by token (GPT Image models, their image input at its own rate).
-- Usage records carry the images made and the image tokens among their input tokens; model price
-- overrides gain a price per image input token (USD).
ALTER TABLE usage_logs ADD COLUMN images integer NOT NULL DEFAULT 0;
ALTER TABLE usage_logs ADD COLUMN image_input_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE model_prices ADD COLUMN image_input double precision CHECK (image_input >= 0);
