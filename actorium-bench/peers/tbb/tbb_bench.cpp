// The fork/join workloads of actorium-bench (see ../../BENCHMARKS.md, "Fork/join") on Intel
// TBB (oneTBB from Debian's libtbb-dev): joins are `tbb::parallel_invoke`, inside a
// `tbb::task_arena` of T threads (the calling thread is one of them). The same algorithms,
// inputs and checksums as ../rust/src/forkjoin.rs.
//
//   tbb-bench <bench> <threads> [k=v ...]
//
// Prints `RESULT seconds=<float> checksum=<integer>`; exit 3 for a workload it does not run.
// Built with -O3 -march=native (build.sh): the host's vector units, as the Rust leaf picks at run
// time and as Java's JIT compiles for.
#include <tbb/global_control.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using u64 = std::uint64_t;

static u64 fib(u64 n) {
    if (n < 2) return n;
    u64 a = 0, b = 0;
    tbb::parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
}

static size_t partition(u64* v, size_t len) {
    size_t last = len - 1, mid = len / 2;
    if (v[mid] < v[0]) std::swap(v[mid], v[0]);
    if (v[last] < v[0]) std::swap(v[last], v[0]);
    if (v[mid] < v[last]) std::swap(v[mid], v[last]);
    u64 pivot = v[last];
    size_t store = 0;
    for (size_t i = 0; i < last; i++) {
        if (v[i] < pivot) std::swap(v[i], v[store++]);
    }
    std::swap(v[store], v[last]);
    return store;
}

static void quicksort(u64* v, size_t len, size_t cutoff) {
    if (len <= std::max<size_t>(cutoff, 2)) {
        std::sort(v, v + len);
        return;
    }
    size_t mid = partition(v, len);
    tbb::parallel_invoke([&] { quicksort(v, mid, cutoff); },
                         [&] { quicksort(v + mid + 1, len - mid - 1, cutoff); });
}

static u64 place(unsigned n, unsigned row, unsigned cols, unsigned d1, unsigned d2, unsigned free);

static u64 queens(unsigned n, unsigned row, unsigned cols, unsigned d1, unsigned d2) {
    if (row == n) return 1;
    unsigned all = (1u << n) - 1;
    return place(n, row, cols, d1, d2, all & ~(cols | d1 | d2));
}

static u64 place(unsigned n, unsigned row, unsigned cols, unsigned d1, unsigned d2, unsigned free) {
    int k = __builtin_popcount(free);
    if (k == 0) return 0;
    if (k == 1) return queens(n, row + 1, cols | free, (d1 | free) << 1, (d2 | free) >> 1);
    unsigned low = 0, rest = free;
    for (int i = 0; i < k / 2; i++) {
        unsigned b = rest & (0u - rest);
        low |= b;
        rest &= ~b;
    }
    u64 a = 0, b = 0;
    tbb::parallel_invoke([&] { a = place(n, row, cols, d1, d2, low); },
                         [&] { b = place(n, row, cols, d1, d2, rest); });
    return a + b;
}

struct View {
    u64* p;
    size_t stride;
    View quad(size_t qi, size_t qj, size_t h) const { return {p + qi * h * stride + qj * h, stride}; }
};

static void matmul(View x, View y, View z, size_t n, size_t threshold) {
    if (n * n <= threshold || n % 2 == 1) {
        // Row pointers marked `__restrict` (the rows do not alias), so that the inner loop
        // vectorises, as the Rust leaf's slices do.
        for (size_t i = 0; i < n; i++) {
            u64* __restrict zi = z.p + i * z.stride;
            const u64* __restrict xi = x.p + i * x.stride;
            for (size_t k = 0; k < n; k++) {
                u64 xik = xi[k];
                const u64* __restrict yk = y.p + k * y.stride;
                for (size_t j = 0; j < n; j++) zi[j] += xik * yk[j];
            }
        }
        return;
    }
    size_t h = n / 2;
    for (size_t r = 0; r < 2; r++) {
        tbb::parallel_invoke(
            [&] { matmul(x.quad(0, r, h), y.quad(r, 0, h), z.quad(0, 0, h), h, threshold); },
            [&] { matmul(x.quad(0, r, h), y.quad(r, 1, h), z.quad(0, 1, h), h, threshold); },
            [&] { matmul(x.quad(1, r, h), y.quad(r, 0, h), z.quad(1, 0, h), h, threshold); },
            [&] { matmul(x.quad(1, r, h), y.quad(r, 1, h), z.quad(1, 1, h), h, threshold); });
    }
}

struct Node {
    u64 value;
    Node* left;
    Node* right;
};

// Balanced, values 0..n, children allocated before their parent (as the Rust peers' tree).
static Node* build(u64 lo, u64 hi) {
    if (lo >= hi) return nullptr;
    u64 mid = lo + (hi - lo) / 2;
    Node* l = build(lo, mid);
    Node* r = build(mid + 1, hi);
    return new Node{mid, l, r};
}

static void destroy(Node* t) {
    std::vector<Node*> stack{t};
    while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        if (!n) continue;
        stack.push_back(n->left);
        stack.push_back(n->right);
        delete n;
    }
}

static u64 tree_sum(const Node* node) {
    if (node->left && node->right) {
        u64 a = 0, b = 0;
        tbb::parallel_invoke([&] { a = tree_sum(node->left); }, [&] { b = tree_sum(node->right); });
        return node->value + a + b;
    }
    if (node->left) return node->value + tree_sum(node->left);
    if (node->right) return node->value + tree_sum(node->right);
    return node->value;
}

struct XorShift {
    u64 s;
    explicit XorShift(u64 index) : s(0x9E3779B97F4A7C15ull ^ (index + 1)) {}
    u64 below(u64 bound) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s % bound;
    }
};

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: tbb-bench <bench> <threads> [k=v ...]\n");
        return 2;
    }
    std::string bench = argv[1];
    int threads = std::atoi(argv[2]);
    std::map<std::string, u64> p;
    for (int i = 3; i < argc; i++) {
        std::string a = argv[i];
        auto eq = a.find('=');
        if (eq == std::string::npos) return 2;
        p[a.substr(0, eq)] = std::strtoull(a.c_str() + eq + 1, nullptr, 10);
    }
    auto get = [&](const char* k) {
        auto it = p.find(k);
        if (it == p.end()) {
            std::fprintf(stderr, "parameter %s missing\n", k);
            std::exit(2);
        }
        return it->second;
    };
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, threads);
    tbb::task_arena arena(threads);
    using clock = std::chrono::steady_clock;
    double secs = 0;
    u64 sum = 0;
    auto timed = [&](auto f) {
        arena.execute([&] {
            auto t0 = clock::now();
            f();
            secs = std::chrono::duration<double>(clock::now() - t0).count();
        });
    };
    if (bench == "fib") {
        u64 n = get("n");
        timed([&] { sum = fib(n); });
    } else if (bench == "quicksort") {
        u64 n = get("n");
        size_t cutoff = get("cutoff");
        XorShift r(42);
        std::vector<u64> v(n);
        for (auto& x : v) x = r.below(1ull << 62);
        timed([&] { quicksort(v.data(), v.size(), cutoff); });
        bool sorted = std::is_sorted(v.begin(), v.end());
        for (u64 x : v) sum += x;
        if (!sorted) sum = 0;
    } else if (bench == "nqueens") {
        unsigned n = get("n");
        timed([&] { sum = queens(n, 0, 0, 0, 0); });
    } else if (bench == "matmul") {
        size_t n = get("n"), threshold = get("threshold");
        std::vector<u64> x(n * n), y(n * n), z(n * n, 0);
        for (size_t e = 0; e < n * n; e++) {
            x[e] = (e / n + 2 * (e % n)) % 7;
            y[e] = (3 * (e / n) + e % n) % 5;
        }
        timed([&] { matmul({x.data(), n}, {y.data(), n}, {z.data(), n}, n, threshold); });
        for (u64 v : z) sum += v;
    } else if (bench == "tree-sum-small" || bench == "tree-sum-big") {
        bool small = bench == "tree-sum-small";
        u64 nodes = small ? get("nodes") : (1ull << get("depth")) - 1;
        u64 reps = small ? get("reps") : 1;
        Node* t = build(0, nodes);
        timed([&] {
            for (u64 i = 0; i < reps; i++) {
                const Node* volatile tv = t;  // opaque: the sum is computed every time
                sum += tree_sum(tv);
            }
        });
        destroy(t);
    } else {
        std::fprintf(stderr, "n/a: tbb runs the fork/join workloads only, not %s\n", bench.c_str());
        return 3;
    }
    std::printf("RESULT seconds=%.9f checksum=%llu\n", secs, (unsigned long long)sum);
    return 0;
}
