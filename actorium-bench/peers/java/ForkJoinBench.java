// The fork/join workloads of actorium-bench (see ../../BENCHMARKS.md, "Fork/join") on Java's
// ForkJoinPool: RecursiveTask/RecursiveAction, `fork()` one half, `compute()` the other,
// `join()` (the documented idiom), in a `new ForkJoinPool(T)`. The same algorithms, inputs and
// checksums as ../rust/src/forkjoin.rs. The workload runs twice in one JVM and the second run
// is reported (the first warms up the JIT, as JMH would).
//
//   java -cp build ForkJoinBench <bench> <threads> [k=v ...]
//
// Prints `RESULT seconds=<float> checksum=<integer>`; exit 3 for a workload it does not run.
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.RecursiveTask;
import java.util.function.Supplier;

public class ForkJoinBench {
    static final class Fib extends RecursiveTask<Long> {
        final long n;
        Fib(long n) { this.n = n; }
        protected Long compute() {
            if (n < 2) return n;
            Fib a = new Fib(n - 1);
            a.fork();
            long b = new Fib(n - 2).compute();
            return a.join() + b;
        }
    }

    static int partition(long[] v, int lo, int hi) { // [lo, hi)
        int last = hi - 1, mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo]) swap(v, mid, lo);
        if (v[last] < v[lo]) swap(v, last, lo);
        if (v[mid] < v[last]) swap(v, mid, last);
        long pivot = v[last];
        int store = lo;
        for (int i = lo; i < last; i++) if (v[i] < pivot) swap(v, i, store++);
        swap(v, store, last);
        return store;
    }

    static void swap(long[] v, int i, int j) { long t = v[i]; v[i] = v[j]; v[j] = t; }

    static final class Sort extends RecursiveAction {
        final long[] v; final int lo, hi, cutoff;
        Sort(long[] v, int lo, int hi, int cutoff) { this.v = v; this.lo = lo; this.hi = hi; this.cutoff = cutoff; }
        protected void compute() {
            if (hi - lo <= Math.max(cutoff, 2)) { Arrays.sort(v, lo, hi); return; }
            int mid = partition(v, lo, hi);
            Sort left = new Sort(v, lo, mid, cutoff);
            left.fork();
            new Sort(v, mid + 1, hi, cutoff).compute();
            left.join();
        }
    }

    static final class Place extends RecursiveTask<Long> {
        final int n, row, cols, d1, d2, free;
        Place(int n, int row, int cols, int d1, int d2, int free) {
            this.n = n; this.row = row; this.cols = cols; this.d1 = d1; this.d2 = d2; this.free = free;
        }
        protected Long compute() {
            int k = Integer.bitCount(free);
            if (k == 0) return 0L;
            if (k == 1) return queens(n, row + 1, cols | free, (d1 | free) << 1, (d2 | free) >>> 1);
            int low = 0, rest = free;
            for (int i = 0; i < k / 2; i++) { int b = rest & -rest; low |= b; rest &= ~b; }
            Place a = new Place(n, row, cols, d1, d2, low);
            a.fork();
            long b = new Place(n, row, cols, d1, d2, rest).compute();
            return a.join() + b;
        }
    }

    static long queens(int n, int row, int cols, int d1, int d2) {
        if (row == n) return 1;
        int all = (1 << n) - 1;
        return new Place(n, row, cols, d1, d2, all & ~(cols | d1 | d2)).compute();
    }

    static final class MatMul extends RecursiveAction {
        final long[] x, y, z; final int xo, yo, zo, stride, n, threshold;
        MatMul(long[] x, int xo, long[] y, int yo, long[] z, int zo, int stride, int n, int threshold) {
            this.x = x; this.xo = xo; this.y = y; this.yo = yo; this.z = z; this.zo = zo;
            this.stride = stride; this.n = n; this.threshold = threshold;
        }
        int q(int o, int qi, int qj, int h) { return o + qi * h * stride + qj * h; }
        protected void compute() {
            if ((long) n * n <= threshold || n % 2 == 1) {
                for (int i = 0; i < n; i++)
                    for (int k = 0; k < n; k++) {
                        long xik = x[xo + i * stride + k];
                        int yr = yo + k * stride, zr = zo + i * stride;
                        for (int j = 0; j < n; j++) z[zr + j] += xik * y[yr + j];
                    }
                return;
            }
            int h = n / 2;
            for (int r = 0; r < 2; r++) {
                invokeAll(
                    new MatMul(x, q(xo, 0, r, h), y, q(yo, r, 0, h), z, q(zo, 0, 0, h), stride, h, threshold),
                    new MatMul(x, q(xo, 0, r, h), y, q(yo, r, 1, h), z, q(zo, 0, 1, h), stride, h, threshold),
                    new MatMul(x, q(xo, 1, r, h), y, q(yo, r, 0, h), z, q(zo, 1, 0, h), stride, h, threshold),
                    new MatMul(x, q(xo, 1, r, h), y, q(yo, r, 1, h), z, q(zo, 1, 1, h), stride, h, threshold));
            }
        }
    }

    static final class Node {
        final long value; final Node left, right;
        Node(long value, Node left, Node right) { this.value = value; this.left = left; this.right = right; }
    }

    // Balanced, values 0..n, children allocated before their parent (as the Rust peers' tree).
    static Node build(long lo, long hi) {
        if (lo >= hi) return null;
        long mid = lo + (hi - lo) / 2;
        Node l = build(lo, mid);
        Node r = build(mid + 1, hi);
        return new Node(mid, l, r);
    }

    static final class TreeSum extends RecursiveTask<Long> {
        final Node node;
        TreeSum(Node node) { this.node = node; }
        protected Long compute() {
            if (node.left != null && node.right != null) {
                TreeSum a = new TreeSum(node.left);
                a.fork();
                long b = new TreeSum(node.right).compute();
                return node.value + a.join() + b;
            }
            if (node.left != null) return node.value + new TreeSum(node.left).compute();
            if (node.right != null) return node.value + new TreeSum(node.right).compute();
            return node.value;
        }
    }

    // The tree summed `reps` times in one task, so that the repetitions run inside the pool,
    // as the Rust systems' loop runs on a worker and TBB's inside its arena (one outside
    // `invoke` per repetition paid a submission, a wake-up and a park each time).
    static final class Reps extends RecursiveTask<Long> {
        final Node tree;
        final long reps;
        Reps(Node tree, long reps) { this.tree = tree; this.reps = reps; }
        protected Long compute() {
            long sum = 0;
            for (long i = 0; i < reps; i++) sum += new TreeSum(tree).compute();
            return sum;
        }
    }

    static long xs;
    static long below(long bound) { // xorshift64, as common::XorShift (bound a power of two here)
        xs ^= xs << 13; xs ^= xs >>> 7; xs ^= xs << 17;
        return Long.remainderUnsigned(xs, bound);
    }

    public static void main(String[] args) {
        if (args.length < 2) { System.err.println("usage: ForkJoinBench <bench> <threads> [k=v ...]"); System.exit(2); }
        String bench = args[0];
        int threads = Integer.parseInt(args[1]);
        Map<String, Long> p = new HashMap<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            p.put(kv[0], Long.parseUnsignedLong(kv[1]));
        }
        ForkJoinPool pool = new ForkJoinPool(threads);
        double secs = 0;
        long sum = 0;
        for (int run = 0; run < 2; run++) {
            long t0;
            switch (bench) {
                case "fib": {
                    long n = p.get("n");
                    t0 = System.nanoTime();
                    sum = pool.invoke(new Fib(n));
                    break;
                }
                case "quicksort": {
                    int n = (int) (long) p.get("n");
                    int cutoff = (int) (long) p.get("cutoff");
                    xs = 0x9E3779B97F4A7C15L ^ 43L;
                    long[] v = new long[n];
                    for (int i = 0; i < n; i++) v[i] = below(1L << 62);
                    t0 = System.nanoTime();
                    pool.invoke(new Sort(v, 0, n, cutoff));
                    secs = (System.nanoTime() - t0) / 1e9;
                    boolean sorted = true;
                    sum = 0;
                    for (int i = 0; i < n; i++) { sum += v[i]; if (i > 0 && v[i - 1] > v[i]) sorted = false; }
                    if (!sorted) sum = 0;
                    t0 = -1;
                    break;
                }
                case "nqueens": {
                    int n = (int) (long) p.get("n");
                    t0 = System.nanoTime();
                    sum = pool.invoke(new Place(n, 0, 0, 0, 0, (1 << n) - 1));
                    break;
                }
                case "matmul": {
                    int n = (int) (long) p.get("n");
                    int threshold = (int) (long) p.get("threshold");
                    long[] x = new long[n * n], y = new long[n * n], z = new long[n * n];
                    for (int e = 0; e < n * n; e++) { x[e] = (e / n + 2 * (e % n)) % 7; y[e] = (3 * (e / n) + e % n) % 5; }
                    t0 = System.nanoTime();
                    pool.invoke(new MatMul(x, 0, y, 0, z, 0, n, n, threshold));
                    secs = (System.nanoTime() - t0) / 1e9;
                    sum = 0;
                    for (long e : z) sum += e;
                    t0 = -1;
                    break;
                }
                case "tree-sum-small":
                case "tree-sum-big": {
                    boolean small = bench.equals("tree-sum-small");
                    long nodes = small ? p.get("nodes") : (1L << p.get("depth")) - 1;
                    long reps = small ? p.get("reps") : 1;
                    Node t = build(0, nodes);
                    t0 = System.nanoTime();
                    sum = pool.invoke(new Reps(t, reps));
                    break;
                }
                default:
                    System.err.println("n/a: java-forkjoin runs the fork/join workloads only, not " + bench);
                    System.exit(3);
                    return;
            }
            if (t0 >= 0) secs = (System.nanoTime() - t0) / 1e9;
        }
        System.out.printf("RESULT seconds=%.9f checksum=%s%n", secs, Long.toUnsignedString(sum));
        pool.shutdown();
    }
}
