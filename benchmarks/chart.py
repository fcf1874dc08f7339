"""A PNG of lifecycle throughput and p95 latency against concurrency."""

import matplotlib

matplotlib.use('Agg')
from matplotlib import pyplot  # noqa: E402


def write(lifecycle_results, path):
    runs = lifecycle_results['runs']
    levels = [r['concurrency'] for r in runs]
    throughput = [r['throughput_per_s'] for r in runs]
    p95 = [r['steps_ms']['lifecycle']['p95'] for r in runs]
    fig, left = pyplot.subplots(figsize=(7, 4))
    left.plot(levels, throughput, 'o-', color='tab:blue')
    left.set_xlabel('concurrent clients')
    left.set_ylabel('lifecycles per second', color='tab:blue')
    left.set_xscale('log', base=2)
    left.set_xticks(levels, [str(c) for c in levels])
    right = left.twinx()
    right.plot(levels, p95, 's--', color='tab:red')
    right.set_ylabel('lifecycle p95 (ms)', color='tab:red')
    left.set_title('ARQ lifecycle: %s' % lifecycle_results['system'],
                   fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot.close(fig)
