{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "gatehouse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped base name of every object. */}}
{{- define "gatehouse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gatehouse.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "gatehouse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component (operator, gateway, postgresql, redis). */}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gatehouse.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gatehouse.componentLabels" -}}
{{ include "gatehouse.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gatehouse.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "gatehouse.operatorServiceAccount" -}}
{{ include "gatehouse.fullname" . }}-operator
{{- end }}

{{- define "gatehouse.gatewayServiceAccount" -}}
{{ include "gatehouse.fullname" . }}-gateway
{{- end }}

{{- define "gatehouse.secretName" -}}
{{ .Values.secrets.existingSecret | default (printf "%s-secrets" (include "gatehouse.fullname" .)) }}
{{- end }}

{{- define "gatehouse.postgresqlSecretName" -}}
{{ .Values.postgresql.existingSecret | default (printf "%s-postgresql" (include "gatehouse.fullname" .)) }}
{{- end }}

{{- define "gatehouse.redisSecretName" -}}
{{ .Values.redis.existingSecret | default (printf "%s-redis" (include "gatehouse.fullname" .)) }}
{{- end }}

{{- define "gatehouse.postgresqlBundled" -}}
{{- if and .Values.postgresql.bundled.enabled (not .Values.postgresql.existingSecret) }}true{{ end }}
{{- end }}

{{- define "gatehouse.redisBundled" -}}
{{- if and .Values.redis.bundled.enabled (not .Values.redis.existingSecret) }}true{{ end }}
{{- end }}

{{/* Environment both planes share: the secrets and the Redis URL. */}}
{{- define "gatehouse.sharedEnv" -}}
- name: GATEHOUSE_KEY_PEPPER
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.secretName" . }}
      key: {{ .Values.secrets.keyPepperKey }}
- name: GATEHOUSE_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.secretName" . }}
      key: {{ .Values.secrets.encryptionKeyKey }}
- name: GATEHOUSE_GATEWAY_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.secretName" . }}
      key: {{ .Values.secrets.gatewayTokenKey }}
{{- if or .Values.redis.existingSecret .Values.redis.bundled.enabled }}
- name: GATEHOUSE_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.redisSecretName" . }}
      key: {{ .Values.redis.secretKey }}
{{- end }}
{{- end }}

{{/* Graceful shutdown: stay in the endpoints' removal window before SIGTERM starts the drain. */}}
{{- define "gatehouse.preStop" -}}
lifecycle:
  preStop:
    exec:
      command: ["sleep", "{{ . }}"]
{{- end }}

{{- define "gatehouse.probes" -}}
startupProbe:
  httpGet: { path: /livez, port: http }
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet: { path: /livez, port: http }
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 2
{{- end }}
