-- The agent (A2A) fields of usage records: the Gatehouse agent server a request called through
-- /v1/agents/{server}, and the JSON-RPC method (`message/send`, `SendStreamingMessage`, ...).
ALTER TABLE usage_logs ADD COLUMN agent_server_id text;
ALTER TABLE usage_logs ADD COLUMN agent_method text;
