{{/* Chart name, overridable. */}}
{{- define "basic-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: the release name when it already contains the chart name (the default install,
`helm install basic-operator`, names everything basic-operator), otherwise release-chart.
*/}}
{{- define "basic-operator.fullname" -}}
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

{{- define "basic-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's standard labels, without app.kubernetes.io/component. */}}
{{- define "basic-operator.commonLabels" -}}
helm.sh/chart: {{ include "basic-operator.chart" . }}
app.kubernetes.io/name: {{ include "basic-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: basic-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels of the operator's pods: stable for the life of a release (Deployment selectors are
immutable). The component keeps the `helm test` Pod out of the metrics Service.
*/}}
{{- define "basic-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "basic-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller-manager
{{- end }}

{{- define "basic-operator.labels" -}}
{{ include "basic-operator.commonLabels" . }}
app.kubernetes.io/component: controller-manager
{{- end }}

{{- define "basic-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "basic-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "basic-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The container port of /metrics: 8443 over HTTPS (controller-runtime's scaffold), 8080 plain. */}}
{{- define "basic-operator.metricsPort" -}}
{{- if .Values.metrics.secure }}8443{{ else }}8080{{ end }}
{{- end }}

{{- define "basic-operator.metricsServiceName" -}}
{{- printf "%s-metrics" (include "basic-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
A duration ("500ms", "15s", "2m", "1h") in milliseconds, parsed the way the operator parses it,
so the chart can reject inconsistent leader-election timings before the pods crash-loop on them.
*/}}
{{- define "basic-operator.durationMs" -}}
{{- $value := toString . }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $value }}
{{- $unit := trimPrefix $number $value }}
{{- $factor := get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) $unit }}
{{- mulf (float64 $number) (float64 $factor) }}
{{- end }}

{{/* Fails the install with a readable message when values contradict each other. */}}
{{- define "basic-operator.validate" -}}
{{- $le := .Values.leaderElection }}
{{- $lease := include "basic-operator.durationMs" $le.leaseDuration | float64 }}
{{- $renew := include "basic-operator.durationMs" $le.renewDeadline | float64 }}
{{- $retry := include "basic-operator.durationMs" $le.retryPeriod | float64 }}
{{- if ge $renew $lease }}
{{- fail (printf "leaderElection.renewDeadline (%s) must be shorter than leaderElection.leaseDuration (%s)" $le.renewDeadline $le.leaseDuration) }}
{{- end }}
{{- if ge $retry $renew }}
{{- fail (printf "leaderElection.retryPeriod (%s) must be shorter than leaderElection.renewDeadline (%s)" $le.retryPeriod $le.renewDeadline) }}
{{- end }}
{{- $shutdownMs := include "basic-operator.durationMs" .Values.gracefulShutdownTimeout | float64 }}
{{- if ge $shutdownMs (mulf .Values.terminationGracePeriodSeconds 1000.0) }}
{{- fail (printf "gracefulShutdownTimeout (%s) must be shorter than terminationGracePeriodSeconds (%v s), or the kubelet kills the operator mid-shutdown" .Values.gracefulShutdownTimeout .Values.terminationGracePeriodSeconds) }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not $le.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true: without it every replica reconciles the same objects" }}
{{- end }}
{{- end }}

{{/* concurrency.<controller> values as the operator's --concurrency flag: "machine=2,volumebackup=1". */}}
{{- define "basic-operator.concurrencyFlag" -}}
{{- $pairs := list }}
{{- range $name, $workers := .Values.concurrency }}
{{- if ne $name "default" }}
{{- $pairs = append $pairs (printf "%s=%v" $name $workers) }}
{{- end }}
{{- end }}
{{- join "," $pairs }}
{{- end }}
