import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** How a reconcile ended, as controller-runtime's reconcile_total labels it. */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

/**
 * controller-runtime's reconcile metrics, so existing dashboards work unchanged, and the operator's
 * own count of reconciles by the reconciled object's namespace.
 */
export interface ControllerMetrics {
  reconcileTotal: Counter<'controller' | 'result'>;
  reconcilesByNamespace: Counter<'controller' | 'object_namespace' | 'result'>;
  reconcileErrors: Counter<'controller'>;
  terminalReconcileErrors: Counter<'controller'>;
  reconcilePanics: Counter<'controller'>;
  reconcileTime: Histogram<'controller'>;
  maxConcurrentReconciles: Gauge<'controller'>;
  activeWorkers: Gauge<'controller'>;
}

const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** Metrics registered once per registry: every caller with the same registry shares them. */
export function perRegistry<T>(create: (registers: Registry[]) => T): (registry: Registry) => T {
  const made = new WeakMap<Registry, T>();
  return (registry) => {
    let metrics = made.get(registry);
    if (!metrics) {
      metrics = create([registry]);
      made.set(registry, metrics);
    }
    return metrics;
  };
}

export const controllerMetrics = perRegistry<ControllerMetrics>((registers) => ({
  reconcileTotal: new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
    registers,
  }),
  // The label is `object_namespace`, not `namespace`: a scrape gives every series the target's own
  // `namespace` (the operator's), which the chart's alerts select on. A metric label of that name
  // would be renamed `exported_namespace` (honor_labels false, the ServiceMonitor's default) or
  // would replace the target's (honor_labels true) and drop the series out of the alerts' selector.
  reconcilesByNamespace: new Counter({
    name: 'basic_operator_reconciles_total',
    help: 'Total number of reconciliations per controller, namespace of the reconciled object (empty for cluster-scoped objects) and result',
    labelNames: ['controller', 'object_namespace', 'result'],
    registers,
  }),
  reconcileErrors: new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'],
    registers,
  }),
  terminalReconcileErrors: new Counter({
    name: 'controller_runtime_terminal_reconcile_errors_total',
    help: 'Total number of terminal reconciliation errors per controller',
    labelNames: ['controller'],
    registers,
  }),
  reconcilePanics: new Counter({
    name: 'controller_runtime_reconcile_panics_total',
    help: 'Total number of reconciliation panics (unexpected exceptions) per controller',
    labelNames: ['controller'],
    registers,
  }),
  reconcileTime: new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'],
    buckets: RECONCILE_TIME_BUCKETS,
    registers,
  }),
  maxConcurrentReconciles: new Gauge({
    name: 'controller_runtime_max_concurrent_reconciles',
    help: 'Maximum number of concurrent reconciles per controller',
    labelNames: ['controller'],
    registers,
  }),
  activeWorkers: new Gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames: ['controller'],
    registers,
  }),
}));

/** client-go's leader election gauge: 1 while this process holds the lease. */
export function leaderElectionGauge(registry: Registry): Gauge<'name'> {
  const existing = registry.getSingleMetric('leader_election_master_status');
  if (existing) return existing as Gauge<'name'>;
  return new Gauge({
    name: 'leader_election_master_status',
    help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
    labelNames: ['name'],
    registers: [registry],
  });
}
