{{- define "streamgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "streamgate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "streamgate.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "streamgate.labels" -}}
app.kubernetes.io/name: {{ include "streamgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "streamgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "streamgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "streamgate.secretName" -}}
{{- default (include "streamgate.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "streamgate.usesRedis" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret .Values.config.redis.sentinels .Values.config.redis.clusterNodes -}}true{{- end -}}
{{- end -}}
