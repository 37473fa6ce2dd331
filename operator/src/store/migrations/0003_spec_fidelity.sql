-- Providers start a new usage period with reset_usage, like workspaces and API keys.
ALTER TABLE providers ADD COLUMN last_reset_at timestamptz;

-- Security settings under the spec's names (membersViewAllData, managersViewPrompts, ...), from
-- the earlier visibility levels: all_members lets members and managers, managers_and_admins
-- managers only, admins_only neither. Settings already under the new names are kept as they are.
CREATE FUNCTION gatehouse_security_settings_0003(old jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'membersViewAllData', to_jsonb(old #>> '{data_visibility,request_response_bodies}' = 'all_members'),
    'managersViewAllData', to_jsonb(old #>> '{data_visibility,request_response_bodies}' IN ('all_members', 'managers_and_admins')),
    'membersViewPrompts', to_jsonb(old #>> '{prompt_access,view}' = 'all_members'),
    'managersViewPrompts', to_jsonb(old #>> '{prompt_access,view}' IN ('all_members', 'managers_and_admins')),
    'membersWritePrompts', to_jsonb(old #>> '{prompt_access,edit}' = 'all_members'),
    'managersWritePrompts', to_jsonb(old #>> '{prompt_access,edit}' IN ('all_members', 'managers_and_admins')),
    'membersViewAnalytics', to_jsonb(old #>> '{analytics_access,view}' = 'all_members'),
    'managersViewAnalytics', to_jsonb(old #>> '{analytics_access,view}' IN ('all_members', 'managers_and_admins'))
  )) || (old - 'data_visibility' - 'prompt_access' - 'analytics_access')
$$;

UPDATE organizations SET settings = jsonb_set(settings, '{security_settings}', gatehouse_security_settings_0003(settings -> 'security_settings'))
  WHERE jsonb_typeof(settings -> 'security_settings') = 'object';
UPDATE workspaces SET settings = jsonb_set(settings, '{security_settings}', gatehouse_security_settings_0003(settings -> 'security_settings'))
  WHERE jsonb_typeof(settings -> 'security_settings') = 'object';

DROP FUNCTION gatehouse_security_settings_0003(jsonb);

-- Deployments carry the reference's deployment_config and auth_settings documents.
ALTER TABLE deployments ADD COLUMN deployment_config jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE deployments ADD COLUMN auth_settings jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Secret references may live in HashiCorp Vault (KV version 2).
ALTER TABLE secret_references DROP CONSTRAINT secret_references_manager_type_check;
ALTER TABLE secret_references ADD CONSTRAINT secret_references_manager_type_check CHECK (manager_type IN ('environment', 'kubernetes', 'hashicorp_vault'));
