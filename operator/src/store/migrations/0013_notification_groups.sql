-- The group a usage alert is about, for policies with group_by: one alert per group value that
-- crossed the threshold (`{"api_key": "…", "metadata.user": "…"}`, in the policy's group_by order);
-- null for notifications about a whole owner (a key, a workspace, a policy without group_by).
ALTER TABLE notifications ADD COLUMN subject_group jsonb;
