// The remote benchmark's CAF peer: CAF 0.17's middleman (`publish` / `remote_actor`) between
// two processes on 127.0.0.1 (what `actorium-bench remote` runs when libcaf-dev is installed).
//
//   caf-remote server            publishes `echo` and `counter` on a free port of 127.0.0.1,
//                                prints `ready <port>`, and serves until its stdin closes
//   caf-remote client PORT N TELLS SPARSE
//
// The server's `echo` answers (ping, I) with I + 1; `counter` counts and sums (item, A, B)
// messages and answers (take) with (count, sum), resetting both. The client measures, from a
// blocking `scoped_actor` (CAF's documented way to talk to actors from a thread): N
// sequential request/receive round trips (p50, p99), TELLS `send`s then one take (every one
// counted and summed: the checksum), and SPARSE round trips one per 5 ms (p50); it prints
// `RESULT call_p50_us=.. call_p99_us=.. tell_mps=.. sparse_p50_us=..` and exits 0. Around the
// round trips and the sends it prints `mark` lines and waits for a line on stdin each time:
// the benchmark reads both processes' CPU time there.
// Both sides use CAF's default configuration (scheduler threads = cores, work stealing).

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using u64 = std::uint64_t;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using item_atom = caf::atom_constant<caf::atom("item")>;
using take_atom = caf::atom_constant<caf::atom("take")>;
using echo_atom = caf::atom_constant<caf::atom("echo")>;
using count_atom = caf::atom_constant<caf::atom("counter")>;

namespace {

caf::behavior echo() {
  return {[](ping_atom, u64 i) { return i + 1; }};
}

struct tally {
  u64 count = 0;
  u64 sum = 0;
};

caf::behavior counter(caf::stateful_actor<tally>* self) {
  return {
      [self](item_atom, u64 a, u64 b) {
        self->state.count += 1;
        self->state.sum += a ^ b;
      },
      [self](take_atom) {
        auto r = std::make_tuple(self->state.count, self->state.sum);
        self->state = tally{};
        return r;
      },
  };
}

// The server publishes one directory actor, which hands out echo and counter by name.
caf::behavior directory(caf::event_based_actor*, caf::actor e, caf::actor c) {
  return {
      [e](echo_atom) { return e; },
      [c](count_atom) { return c; },
  };
}

double pct(std::vector<double> v, std::size_t p) {
  std::sort(v.begin(), v.end());
  auto k = std::min(v.size() - 1, v.size() * p / 100);
  return v[k];
}

double since_us(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

int server() {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto e = sys.spawn(echo);
  auto c = sys.spawn(counter);
  auto d = sys.spawn(directory, e, c);
  auto port = sys.middleman().publish(d, 0, "127.0.0.1");
  if (!port) {
    std::cerr << "caf-remote: publish failed: " << sys.render(port.error()) << "\n";
    return 1;
  }
  std::cout << "ready " << *port << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(e, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(c, caf::exit_reason::user_shutdown);
  return 0;
}

// Tells the benchmark a phase begins (`mark`) or ends (`mark COUNT`, its round trips or
// messages) and waits for a line on stdin: the benchmark reads both processes' CPU time
// meanwhile.
void mark_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  std::string answer;
  std::getline(std::cin, answer);
}
void mark() { mark_line("mark"); }
void mark_end(u64 count) { mark_line("mark " + std::to_string(count)); }

int client(uint16_t port, u64 n, u64 tells, u64 sparse) {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto dir = sys.middleman().remote_actor("127.0.0.1", port);
  if (!dir) {
    std::cerr << "caf-remote: remote_actor failed: " << sys.render(dir.error()) << "\n";
    return 1;
  }
  caf::scoped_actor self{sys};
  int failed = 0;
  auto fail = [&](caf::error& err) {
    std::cerr << "caf-remote: " << sys.render(err) << "\n";
    failed = 1;
  };
  caf::actor e, c;
  self->request(*dir, caf::infinite, echo_atom::value).receive([&](caf::actor a) { e = a; }, fail);
  self->request(*dir, caf::infinite, count_atom::value)
      .receive([&](caf::actor a) { c = a; }, fail);
  if (failed)
    return 1;
  auto call = [&](u64 i) {
    self->request(e, caf::infinite, ping_atom::value, i)
        .receive(
            [&](u64 r) {
              if (r != i + 1)
                failed = 1;
            },
            fail);
  };
  std::vector<double> lat;
  lat.reserve(n);
  mark();
  for (u64 i = 0; i < n && !failed; ++i) {
    auto t = std::chrono::steady_clock::now();
    call(i);
    lat.push_back(since_us(t));
  }
  mark_end(n);
  mark();
  auto t = std::chrono::steady_clock::now();
  u64 sum = 0;
  for (u64 i = 0; i < tells; ++i) {
    self->send(c, item_atom::value, i, 2 * i + 1);
    sum += i ^ (2 * i + 1);
  }
  self->request(c, caf::infinite, take_atom::value)
      .receive(
          [&](u64 count, u64 got) {
            if (count != tells || got != sum) {
              std::cerr << "caf-remote: checksum: " << count << " of " << tells << "\n";
              failed = 1;
            }
          },
          fail);
  double tell_mps = tells / (since_us(t) / 1e6) / 1e6;
  mark_end(tells);
  std::vector<double> slat;
  for (u64 i = 0; i < sparse && !failed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto s = std::chrono::steady_clock::now();
    call(i);
    slat.push_back(since_us(s));
  }
  if (failed || lat.empty() || slat.empty())
    return 1;
  std::printf("RESULT call_p50_us=%.2f call_p99_us=%.2f tell_mps=%.4f sparse_p50_us=%.2f\n",
              pct(lat, 50), pct(lat, 99), tell_mps, pct(slat, 50));
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "server" && argc == 2)
    return server();
  if (mode == "client" && argc == 6)
    return client(static_cast<uint16_t>(std::stoul(argv[2])), std::stoull(argv[3]),
                  std::stoull(argv[4]), std::stoull(argv[5]));
  std::cerr << "usage: caf-remote server | caf-remote client PORT N TELLS SPARSE\n";
  return 2;
}
