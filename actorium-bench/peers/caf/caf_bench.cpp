#include <atomic>
#include <algorithm>
#include <thread>
#include <mutex>
#include <unordered_map>
#include <sys/resource.h>
// actorium-bench workloads on CAF 0.17 (the C++ Actor Framework).
//
// Usage: caf-bench <bench> <stealing|sharing> <threads> k=v k=v ...
//
// Implements the workloads of actorium-bench/BENCHMARKS.md with event-based actors. Prints
// exactly one line `RESULT seconds=<float> checksum=<integer>` to stdout and exits 0; errors go
// to stderr with a non-zero exit (2: unknown benchmark, 3: workload not available on CAF).
//
// Timed region: from just after the actor_system (and main's scoped_actor) is up until main has
// received the final report(s). Actors whose end the contract names quit there; actors the
// contract never ends (servers, Pong, ring nodes, mall, big's peers, the barber's room and the
// barber) are told to exit by main after the clock has stopped, so that the actor_system shuts
// down cleanly at the end of main.

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

using u64 = std::uint64_t;

// Atoms (CAF 0.17: at most 10 characters).
using done_atom = caf::atom_constant<caf::atom("done")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using go_atom = caf::atom_constant<caf::atom("go")>;
using msg_atom = caf::atom_constant<caf::atom("msg")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using req_atom = caf::atom_constant<caf::atom("req")>;
using rep_atom = caf::atom_constant<caf::atom("rep")>;
using row_atom = caf::atom_constant<caf::atom("row")>;
using ball_atom = caf::atom_constant<caf::atom("ball")>;
using inc_atom = caf::atom_constant<caf::atom("increment")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using total_atom = caf::atom_constant<caf::atom("total")>;
using work_atom = caf::atom_constant<caf::atom("work")>;
using token_atom = caf::atom_constant<caf::atom("token")>;
using meet_atom = caf::atom_constant<caf::atom("meet")>;
using paired_atom = caf::atom_constant<caf::atom("paired")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;
using dput_atom = caf::atom_constant<caf::atom("dput")>;
using dget_atom = caf::atom_constant<caf::atom("dget")>;
using xfer_atom = caf::atom_constant<caf::atom("transfer")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using credited_atom = caf::atom_constant<caf::atom("credited")>;
using completed_atom = caf::atom_constant<caf::atom("completed")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using balance_atom = caf::atom_constant<caf::atom("balance")>;
using next_atom = caf::atom_constant<caf::atom("nextterm")>;
using compute_atom = caf::atom_constant<caf::atom("compute")>;
using computed_atom = caf::atom_constant<caf::atom("computed")>;
using term_atom = caf::atom_constant<caf::atom("termdone")>;
using produce_atom = caf::atom_constant<caf::atom("produce")>;
using item_atom = caf::atom_constant<caf::atom("item")>;
using pdone_atom = caf::atom_constant<caf::atom("pdone")>;
using consume_atom = caf::atom_constant<caf::atom("consume")>;
using avail_atom = caf::atom_constant<caf::atom("available")>;
using sum_atom = caf::atom_constant<caf::atom("sum")>;
using enter_atom = caf::atom_constant<caf::atom("enter")>;
using full_atom = caf::atom_constant<caf::atom("full")>;
using cut_atom = caf::atom_constant<caf::atom("cut")>;
using cutdone_atom = caf::atom_constant<caf::atom("cutdone")>;
using nextcust_atom = caf::atom_constant<caf::atom("nextcust")>;
using returned_atom = caf::atom_constant<caf::atom("returned")>;
using served_atom = caf::atom_constant<caf::atom("served")>;
using smoke_atom = caf::atom_constant<caf::atom("smoke")>;
using started_atom = caf::atom_constant<caf::atom("started")>;
using smkexit_atom = caf::atom_constant<caf::atom("smkexit")>;

using clock_type = std::chrono::steady_clock;

struct params {
  std::map<std::string, u64> kv;
  u64 get(const std::string& key) const {
    auto i = kv.find(key);
    if (i == kv.end())
      throw std::runtime_error("missing parameter " + key);
    return i->second;
  }
};

struct outcome {
  double seconds;
  u64 checksum;
};

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Receives `count` reports `(done, v)` on main's scoped actor and returns their sum.
u64 collect(caf::scoped_actor& self, u64 count) {
  u64 total = 0;
  for (u64 i = 0; i < count; ++i)
    self->receive([&](done_atom, u64 v) { total += v; });
  return total;
}

// Tells actors the contract never ends to exit (called after the clock has stopped).
void shut(const std::vector<caf::actor>& xs) {
  for (auto& x : xs)
    caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
}

// ---- static-send (n) ----------------------------------------------------------------------
struct static_state {
  u64 count = 0;
};

caf::behavior static_sender(caf::stateful_actor<static_state>* self, caf::actor main, u64 n) {
  return {
    [=](tick_atom t) {
      auto c = ++self->state.count;
      if (c < n) {
        self->send(self, t);
      } else {
        self->send(main, done_atom::value, c);
        self->quit();
      }
    },
  };
}

outcome run_static_send(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("n");
  auto t0 = clock_type::now();
  auto a = sys.spawn(static_sender, caf::actor{self}, n);
  self->send(a, tick_atom::value);
  auto sum = collect(self, 1);
  return {since(t0), sum};
}

// ---- dynamic-send (n) ---------------------------------------------------------------------
caf::behavior hop(caf::event_based_actor* self, caf::actor main, u64 n) {
  return {
    [=](go_atom, u64 k) {
      if (k < n) {
        auto next = self->spawn(hop, main, n);
        self->send(next, go_atom::value, k + 1);
      } else {
        self->send(main, done_atom::value, k);
      }
      self->quit();
    },
  };
}

outcome run_dynamic_send(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("n");
  auto t0 = clock_type::now();
  auto first = sys.spawn(hop, caf::actor{self}, n);
  self->send(first, go_atom::value, u64{1});
  first = nullptr;
  u64 last = 0;
  self->receive([&](done_atom, u64 k) { last = k; });
  return {since(t0), last};
}

// ---- executor (actors, group, rounds) -----------------------------------------------------
using group_ptr = std::shared_ptr<std::vector<caf::actor>>;

struct exec_state {
  u64 recv = 0;
  u64 sent = 0;
};

caf::behavior exec_actor(caf::stateful_actor<exec_state>* self, caf::actor main, group_ptr grp,
                         u64 local, u64 big_r) {
  return {
    [=](msg_atom m) {
      auto& s = self->state;
      s.recv += 1;
      if (s.sent < big_r) {
        auto& members = *grp;
        self->send(members[(local + s.sent) % members.size()], m);
        s.sent += 1;
      }
      if (s.recv == big_r + 1) {
        self->send(main, done_atom::value, s.recv);
        self->quit();
      }
    },
  };
}

outcome run_executor(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto actors = p.get("actors");
  auto group = p.get("group");
  auto rounds = p.get("rounds");
  if (group == 0 || actors % group != 0)
    throw std::runtime_error("executor: actors must be a positive multiple of group");
  auto big_r = rounds * group;
  auto t0 = clock_type::now();
  caf::actor main{self};
  std::vector<group_ptr> groups;
  groups.reserve(actors / group);
  for (u64 g = 0; g < actors / group; ++g) {
    auto grp = std::make_shared<std::vector<caf::actor>>();
    grp->reserve(group);
    for (u64 l = 0; l < group; ++l)
      grp->push_back(sys.spawn(exec_actor, main, grp, l, big_r));
    groups.push_back(std::move(grp));
  }
  // Every actor's group is complete before any actor gets its first message.
  for (auto& grp : groups)
    for (auto& a : *grp)
      self->send(a, msg_atom::value);
  groups.clear(); // the actors hold their groups; they release them when they quit
  auto total = collect(self, actors);
  return {since(t0), total};
}

// ---- repeat (servers, reps) ---------------------------------------------------------------
caf::behavior server(caf::event_based_actor* self, u64 index) {
  return {
    [=](req_atom) {
      self->send(caf::actor_cast<caf::actor>(self->current_sender()), rep_atom::value, index);
    },
  };
}

struct client_state {
  u64 replies = 0;
  u64 reps_done = 0;
  u64 sum = 0;
};

caf::behavior client(caf::stateful_actor<client_state>* self, caf::actor main,
                     std::shared_ptr<const std::vector<caf::actor>> servers, u64 reps) {
  auto request_all = [=] {
    for (auto& s : *servers)
      self->send(s, req_atom::value);
  };
  auto finish = [=] {
    self->send(main, done_atom::value, self->state.sum);
    self->quit();
  };
  return {
    [=](start_atom) {
      if (reps == 0 || servers->empty())
        finish();
      else
        request_all();
    },
    [=](rep_atom, u64 index) {
      auto& s = self->state;
      s.sum += index + 1;
      if (++s.replies == servers->size()) {
        s.replies = 0;
        if (++s.reps_done == reps)
          finish();
        else
          request_all();
      }
    },
  };
}

outcome run_repeat(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n_servers = p.get("servers");
  auto reps = p.get("reps");
  auto t0 = clock_type::now();
  auto servers = std::make_shared<std::vector<caf::actor>>();
  servers->reserve(n_servers);
  for (u64 i = 0; i < n_servers; ++i)
    servers->push_back(sys.spawn(server, i));
  auto c = sys.spawn(client, caf::actor{self},
                     std::shared_ptr<const std::vector<caf::actor>>(servers), reps);
  self->send(c, start_atom::value);
  auto sum = collect(self, 1);
  auto secs = since(t0);
  shut(*servers);
  return {secs, sum};
}

// ---- matrix (n) ---------------------------------------------------------------------------
struct matrices {
  u64 n;
  std::vector<u64> x; // row-major n*n
  std::vector<u64> y;
};

caf::behavior row_actor(caf::event_based_actor* self, caf::actor main,
                        std::shared_ptr<const matrices> m) {
  return {
    [=](row_atom, u64 i) {
      const u64 n = m->n;
      const u64* xi = m->x.data() + i * n;
      const u64* y = m->y.data();
      std::vector<u64> z(n, 0); // row i of Z = X * Y
      for (u64 k = 0; k < n; ++k) {
        const u64 a = xi[k];
        const u64* yk = y + k * n;
        for (u64 j = 0; j < n; ++j)
          z[j] += a * yk[j];
      }
      u64 sum = 0;
      for (u64 j = 0; j < n; ++j)
        sum += z[j];
      self->send(main, done_atom::value, sum);
      self->quit();
    },
  };
}

outcome run_matrix_impl(caf::actor_system& sys, caf::scoped_actor& self, u64 n,
                        std::shared_ptr<const matrices> m) {
  auto t0 = clock_type::now();
  caf::actor main{self};
  for (u64 i = 0; i < n; ++i) {
    auto a = sys.spawn(row_actor, main, m);
    self->send(a, row_atom::value, i);
  }
  auto sum = collect(self, n);
  return {since(t0), sum};
}

std::shared_ptr<const matrices> make_matrices(u64 n) {
  auto m = std::make_shared<matrices>();
  m->n = n;
  m->x.resize(n * n);
  m->y.resize(n * n);
  for (u64 i = 0; i < n; ++i)
    for (u64 j = 0; j < n; ++j) {
      m->x[i * n + j] = (i + 2 * j) % 7;
      m->y[i * n + j] = (3 * i + j) % 5;
    }
  return m;
}

// ---- ping-pong (n) ------------------------------------------------------------------------
caf::behavior pong(caf::event_based_actor* self) {
  return {
    [=](ball_atom b) { self->send(caf::actor_cast<caf::actor>(self->current_sender()), b); },
  };
}

struct ping_state {
  u64 trips = 0;
};

caf::behavior ping(caf::stateful_actor<ping_state>* self, caf::actor main, caf::actor pong_actor,
                   u64 n) {
  return {
    [=](start_atom) {
      if (n == 0) {
        self->send(main, done_atom::value, u64{0});
        self->quit();
      } else {
        self->send(pong_actor, ball_atom::value);
      }
    },
    [=](ball_atom b) {
      auto t = ++self->state.trips;
      if (t == n) {
        self->send(main, done_atom::value, t);
        self->quit();
      } else {
        self->send(pong_actor, b);
      }
    },
  };
}

outcome run_ping_pong(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("n");
  auto t0 = clock_type::now();
  auto po = sys.spawn(pong);
  auto pi = sys.spawn(ping, caf::actor{self}, po, n);
  self->send(pi, start_atom::value);
  auto sum = collect(self, 1);
  auto secs = since(t0);
  shut({po});
  return {secs, sum};
}

// ---- counting (n) -------------------------------------------------------------------------
struct counter_state {
  u64 total = 0;
};

caf::behavior counter(caf::stateful_actor<counter_state>* self) {
  return {
    [=](inc_atom) { self->state.total += 1; },
    [=](get_atom) {
      self->send(caf::actor_cast<caf::actor>(self->current_sender()), total_atom::value,
                 self->state.total);
      self->quit(); // Get is the last message the counter receives
    },
  };
}

caf::behavior producer(caf::event_based_actor* self, caf::actor main, caf::actor cnt, u64 n) {
  return {
    [=](start_atom) {
      for (u64 i = 0; i < n; ++i)
        self->send(cnt, inc_atom::value);
      self->send(cnt, get_atom::value);
    },
    [=](total_atom, u64 total) {
      self->send(main, done_atom::value, total);
      self->quit();
    },
  };
}

outcome run_counting(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("n");
  auto t0 = clock_type::now();
  auto c = sys.spawn(counter);
  auto pr = sys.spawn(producer, caf::actor{self}, c, n);
  c = nullptr;
  self->send(pr, start_atom::value);
  auto sum = collect(self, 1);
  return {since(t0), sum};
}

// ---- fork-join-throughput (actors, msgs) --------------------------------------------------
struct fj_state {
  u64 x = 0;
  u64 count = 0;
};

caf::behavior fj_worker(caf::stateful_actor<fj_state>* self, caf::actor main, u64 msgs) {
  return {
    [=](work_atom, u64 r) {
      auto& s = self->state;
      s.x = (s.x * 31 + r) % 1000003;
      if (++s.count == msgs) {
        self->send(main, done_atom::value, s.count);
        self->quit(); // no further messages are sent to it
      }
    },
  };
}

outcome run_fj_throughput(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto actors = p.get("actors");
  auto msgs = p.get("msgs");
  auto t0 = clock_type::now();
  if (msgs == 0)
    return {since(t0), 0};
  caf::actor main{self};
  std::vector<caf::actor> ws;
  ws.reserve(actors);
  for (u64 i = 0; i < actors; ++i)
    ws.push_back(sys.spawn(fj_worker, main, msgs));
  for (u64 r = 0; r < msgs; ++r)
    for (auto& w : ws)
      self->send(w, work_atom::value, r);
  ws.clear();
  auto total = collect(self, actors);
  return {since(t0), total};
}

// ---- fork-join-creation (n) ---------------------------------------------------------------
struct fjc_state {
  u64 x = 0;
};

caf::behavior fjc_worker(caf::stateful_actor<fjc_state>* self, caf::actor main) {
  return {
    [=](work_atom, u64 i) {
      auto& s = self->state;
      s.x = (s.x * 31 + i) % 1000003;
      self->send(main, done_atom::value, u64{1});
      self->quit();
    },
  };
}

outcome run_fj_creation(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("n");
  auto t0 = clock_type::now();
  caf::actor main{self};
  for (u64 i = 0; i < n; ++i) {
    auto a = sys.spawn(fjc_worker, main);
    self->send(a, work_atom::value, i);
  }
  auto total = collect(self, n);
  return {since(t0), total};
}

// ---- thread-ring (actors, passes) ---------------------------------------------------------
caf::behavior ring_node(caf::event_based_actor* self, caf::actor main,
                        std::shared_ptr<const std::vector<caf::actor>> ring, u64 index,
                        u64 actors) {
  const u64 next = (index + 1) % actors;
  return {
    [=](token_atom t, u64 k) {
      if (k > 0)
        self->send((*ring)[next], t, k - 1);
      else
        self->send(main, done_atom::value, index); // main checks the index
    },
  };
}

outcome run_thread_ring(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto actors = p.get("actors");
  auto passes = p.get("passes");
  if (actors == 0)
    throw std::runtime_error("thread-ring: actors must be positive");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto ring = std::make_shared<std::vector<caf::actor>>();
  ring->reserve(actors);
  // Node i reads its successor from the shared ring, which is complete before the token starts.
  for (u64 i = 0; i < actors; ++i)
    ring->push_back(sys.spawn(ring_node, main,
                              std::shared_ptr<const std::vector<caf::actor>>(ring), i, actors));
  self->send((*ring)[0], token_atom::value, passes);
  u64 reporter = 0;
  self->receive([&](done_atom, u64 idx) { reporter = idx; });
  auto secs = since(t0);
  shut(*ring);
  // Token(passes) reaches node 0, Token(0) reaches node passes % actors.
  if (reporter != passes % actors)
    throw std::runtime_error("thread-ring: Token(0) reached node " + std::to_string(reporter)
                             + ", expected " + std::to_string(passes % actors));
  return {secs, passes};
}

// ---- chameneos (creatures, meetings) ------------------------------------------------------
struct mall_state {
  u64 meetings = 0;
  caf::actor waiting; // at most one waiting creature
  u64 waiting_colour = 0;
};

caf::behavior mall(caf::stateful_actor<mall_state>* self, u64 max_meetings) {
  return {
    [=](meet_atom, caf::actor& who, u64 colour) {
      auto& s = self->state;
      if (s.meetings < max_meetings) {
        if (!s.waiting) {
          s.waiting = std::move(who);
          s.waiting_colour = colour;
        } else {
          s.meetings += 1;
          self->send(s.waiting, paired_atom::value, colour);
          self->send(who, paired_atom::value, s.waiting_colour);
          s.waiting = nullptr;
        }
      } else {
        self->send(who, stop_atom::value);
        if (s.waiting) {
          self->send(s.waiting, stop_atom::value);
          s.waiting = nullptr;
        }
      }
    },
  };
}

struct creature_state {
  u64 colour = 0;
  u64 met = 0;
};

caf::behavior creature(caf::stateful_actor<creature_state>* self, caf::actor main,
                       caf::actor mall_actor, u64 colour) {
  self->state.colour = colour;
  return {
    [=](start_atom) {
      self->send(mall_actor, meet_atom::value, caf::actor_cast<caf::actor>(self),
                 self->state.colour);
    },
    [=](paired_atom, u64 other) {
      auto& s = self->state;
      s.met += 1;
      if (s.colour != other)
        s.colour = 3 - s.colour - other;
      self->send(mall_actor, meet_atom::value, caf::actor_cast<caf::actor>(self), s.colour);
    },
    [=](stop_atom) {
      self->send(main, done_atom::value, self->state.met);
      self->quit();
    },
  };
}

outcome run_chameneos(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto creatures = p.get("creatures");
  auto meetings = p.get("meetings");
  if (creatures < 2 && meetings > 0)
    throw std::runtime_error("chameneos: needs at least 2 creatures");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto m = sys.spawn(mall, meetings);
  std::vector<caf::actor> cs;
  cs.reserve(creatures);
  for (u64 i = 0; i < creatures; ++i)
    cs.push_back(sys.spawn(creature, main, m, i % 3));
  for (auto& c : cs)
    self->send(c, start_atom::value);
  cs.clear();
  auto total = collect(self, creatures);
  auto secs = since(t0);
  shut({m});
  return {secs, total};
}

// ---- big (actors, pings) ------------------------------------------------------------------
struct big_state {
  u64 rng = 0;
  u64 sent = 0;
  u64 pongs = 0;
};

caf::behavior big_actor(caf::stateful_actor<big_state>* self, caf::actor main,
                        std::shared_ptr<const std::vector<caf::actor>> peers, u64 index,
                        u64 pings) {
  // xorshift64, seeded with the actor's index (+1, as xorshift needs a non-zero state).
  self->state.rng = index + 1;
  auto send_ping = [=] {
    auto& s = self->state;
    s.rng ^= s.rng << 13;
    s.rng ^= s.rng >> 7;
    s.rng ^= s.rng << 17;
    const u64 n = peers->size();
    u64 to;
    if (n > 1) { // uniformly among the other actors
      to = s.rng % (n - 1);
      if (to >= index)
        to += 1;
    } else {
      to = 0;
    }
    self->send((*peers)[to], ping_atom::value, caf::actor_cast<caf::actor>(self));
    s.sent += 1;
  };
  return {
    [=](start_atom) {
      if (pings == 0)
        self->send(main, done_atom::value, u64{0});
      else
        send_ping();
    },
    [=](ping_atom, const caf::actor& from) { self->send(from, pong_atom::value); },
    [=](pong_atom) {
      auto& s = self->state;
      s.pongs += 1;
      if (s.sent < pings)
        send_ping();
      if (s.pongs == pings)
        self->send(main, done_atom::value, s.pongs);
    },
  };
}

outcome run_big(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto actors = p.get("actors");
  auto pings = p.get("pings");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto peers = std::make_shared<std::vector<caf::actor>>();
  peers->reserve(actors);
  for (u64 i = 0; i < actors; ++i)
    peers->push_back(
      sys.spawn(big_actor, main, std::shared_ptr<const std::vector<caf::actor>>(peers), i, pings));
  // Every actor knows all others before any actor starts.
  for (auto& a : *peers)
    self->send(a, start_atom::value);
  auto total = collect(self, actors);
  auto secs = since(t0);
  shut(*peers);
  return {secs, total};
}

// ---- dictionary (workers, msgs, write): Savina's concurrent dictionary ----------------------
struct dict_state {
  std::unordered_map<u64, u64> map;
};

caf::behavior dictionary_actor(caf::stateful_actor<dict_state>* self) {
  return {
    [=](dput_atom, u64 key, u64 value, const caf::actor& from) {
      self->state.map[key] = value;
      self->send(from, rep_atom::value, u64{0});
    },
    [=](dget_atom, u64 key, const caf::actor& from) {
      auto it = self->state.map.find(key);
      self->send(from, rep_atom::value, it == self->state.map.end() ? u64{0} : it->second);
    },
  };
}

struct dict_worker_state {
  u64 sent = 0;
  u64 last = 0;
  u64 sum = 0;
};

caf::behavior dict_worker(caf::stateful_actor<dict_worker_state>* self, caf::actor main,
                          caf::actor dict, u64 id, u64 msgs, u64 write) {
  // A worker's i-th request: `write` percent are writes (the first one included), the others
  // read the key of the worker's last write (so the replies do not depend on interleaving).
  auto request = [=] {
    auto& s = self->state;
    const u64 i = s.sent++;
    if (i * write % 100 < write) {
      s.last = i;
      self->send(dict, dput_atom::value, id * msgs + i, i + 1, caf::actor_cast<caf::actor>(self));
    } else {
      self->send(dict, dget_atom::value, id * msgs + s.last, caf::actor_cast<caf::actor>(self));
    }
  };
  return {
    [=](start_atom) { request(); },
    [=](rep_atom, u64 v) {
      auto& s = self->state;
      s.sum += v;
      if (s.sent < msgs) {
        request();
      } else {
        self->send(main, done_atom::value, s.sum);
        self->quit();
      }
    },
  };
}

outcome run_dictionary(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto workers = p.get("workers");
  auto msgs = p.get("msgs");
  auto write = p.get("write");
  if (write < 1 || write > 100)
    throw std::runtime_error("dictionary: `write` is a percentage, 1 to 100");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto dict = sys.spawn(dictionary_actor);
  std::vector<caf::actor> all;
  all.reserve(workers);
  for (u64 id = 0; id < workers; ++id)
    all.push_back(sys.spawn(dict_worker, main, dict, id, msgs, write));
  for (auto& w : all)
    self->send(w, start_atom::value);
  auto total = collect(self, workers);
  auto secs = since(t0);
  shut({dict});
  return {secs, total};
}

// ---- logistic-map (series, terms): Savina's logistic map series -----------------------------
constexpr u64 logmap_m = 1000003;

u64 logmap_next(u64 s, u64 x) { return (3 + s) % logmap_m * x % logmap_m * (logmap_m - x) % logmap_m; }

caf::behavior rate_computer(caf::event_based_actor* self, u64 index) {
  return {
    [=](compute_atom, u64 x, const caf::actor& from) {
      self->send(from, computed_atom::value, logmap_next(index, x));
    },
  };
}

struct series_state {
  u64 term = 0;
};

caf::behavior series_actor(caf::stateful_actor<series_state>* self, u64 index,
                           caf::actor computer, caf::actor master) {
  self->state.term = index % logmap_m + 1;
  return {
    [=](next_atom) {
      self->send(computer, compute_atom::value, self->state.term,
                 caf::actor_cast<caf::actor>(self));
    },
    [=](computed_atom, u64 x) {
      self->state.term = x;
      self->send(master, term_atom::value, x);
    },
  };
}

struct logmaster_state {
  u64 step = 0;
  u64 reported = 0;
  u64 sum = 0;
};

caf::behavior logmaster_actor(caf::stateful_actor<logmaster_state>* self, caf::actor main,
                              std::shared_ptr<std::vector<caf::actor>> series, u64 terms) {
  auto round = [=] {
    for (auto& s : *series)
      self->send(s, next_atom::value);
  };
  return {
    [=](start_atom) {
      if (terms == 0) {
        u64 sum = 0;
        for (u64 s = 0; s < series->size(); ++s)
          sum += s % logmap_m + 1;
        self->send(main, done_atom::value, sum);
      } else {
        round();
      }
    },
    [=](term_atom, u64 x) {
      auto& st = self->state;
      st.reported += 1;
      if (st.step + 1 == terms)
        st.sum += x;
      if (st.reported == series->size()) {
        st.reported = 0;
        st.step += 1;
        if (st.step < terms)
          round();
        else
          self->send(main, done_atom::value, st.sum);
      }
    },
  };
}

outcome run_logistic_map(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("series");
  auto terms = p.get("terms");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto series = std::make_shared<std::vector<caf::actor>>();
  auto master = sys.spawn(logmaster_actor, main, series, terms);
  std::vector<caf::actor> computers;
  for (u64 i = 0; i < n; ++i) {
    computers.push_back(sys.spawn(rate_computer, i));
    series->push_back(sys.spawn(series_actor, i, computers.back(), master));
  }
  self->send(master, start_atom::value);
  auto total = collect(self, 1);
  auto secs = since(t0);
  shut(*series);
  shut(computers);
  shut({master});
  return {secs, total};
}

// ---- banking (accounts, transactions): Savina's bank transaction ---------------------------
constexpr u64 bank_initial = 1000000000;

struct account_state {
  u64 balance = bank_initial;
};

using account_list = std::shared_ptr<std::vector<caf::actor>>;

caf::behavior account_actor(caf::stateful_actor<account_state>* self, u64 index,
                            account_list accounts, caf::actor teller) {
  return {
    [=](xfer_atom, u64 to, u64 amount) {
      self->state.balance -= amount;
      self->send((*accounts)[to], credit_atom::value, index, amount);
    },
    [=](credit_atom, u64 from, u64 amount) {
      self->state.balance += amount;
      self->send((*accounts)[from], credited_atom::value);
    },
    [=](credited_atom) { self->send(teller, completed_atom::value); },
    [=](report_atom) { self->send(teller, balance_atom::value, index, self->state.balance); },
  };
}

struct teller_state {
  u64 completed = 0;
  u64 reported = 0;
  u64 sum = 0;
};

caf::behavior teller_actor(caf::stateful_actor<teller_state>* self, caf::actor main,
                           account_list accounts, u64 transactions) {
  auto ask_balances = [=] {
    for (auto& a : *accounts)
      self->send(a, report_atom::value);
  };
  return {
    [=](start_atom) {
      const u64 n = accounts->size();
      for (u64 t = 0; t < transactions; ++t) {
        // The same arithmetic sequence as every other implementation (BENCHMARKS.md).
        const u64 from = t * 7919 % n;
        const u64 to = (from + 1 + t * 104729 % (n - 1)) % n;
        self->send((*accounts)[from], xfer_atom::value, to, t % 100 + 1);
      }
      if (transactions == 0)
        ask_balances();
    },
    [=](completed_atom) {
      if (++self->state.completed == transactions)
        ask_balances();
    },
    [=](balance_atom, u64 i, u64 b) {
      auto& s = self->state;
      s.sum += (i + 1) * b;
      if (++s.reported == accounts->size()) {
        self->send(main, done_atom::value, s.sum);
        self->quit();
      }
    },
  };
}

outcome run_banking(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("accounts");
  auto transactions = p.get("transactions");
  if (n < 2)
    throw std::runtime_error("banking: needs at least 2 accounts");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto accounts = std::make_shared<std::vector<caf::actor>>();
  // The teller needs the accounts and the accounts the teller: the list is filled before the
  // teller starts (it only reads it in its handlers).
  auto teller = sys.spawn(teller_actor, main, accounts, transactions);
  accounts->reserve(n);
  for (u64 i = 0; i < n; ++i)
    accounts->push_back(sys.spawn(account_actor, i, accounts, teller));
  self->send(teller, start_atom::value);
  auto total = collect(self, 1);
  auto secs = since(t0);
  shut(*accounts);
  return {secs, total};
}

// ---- busy(x, n): the unit of work of bounded-buffer, sleeping-barber, cigarette-smokers -------
// n steps of the Park-Miller generator y <- 48271 y mod (2^31 - 1) from y = x mod (2^31 - 2) + 1
// (every value below 2^47).
constexpr u64 busy_m = 2147483647;

u64 busy(u64 x, u64 n) {
  u64 y = x % (busy_m - 1) + 1;
  for (u64 k = 0; k < n; ++k)
    y = y * 48271 % busy_m;
  return y;
}

// ---- bounded-buffer (producers, consumers, items, buffer, cost): Savina's producer-consumer --
using actor_list = std::shared_ptr<std::vector<caf::actor>>;

struct bb_manager_state {
  std::deque<u64> available;               // consumers with nothing to do, oldest first
  std::deque<u64> buffer;                  // buffered items, oldest first
  std::deque<std::pair<u64, u64>> waiting; // (item, producer) that found the buffer full
  u64 producers_done = 0;
};

caf::behavior bb_manager(caf::stateful_actor<bb_manager_state>* self, actor_list producers,
                         actor_list consumers, u64 capacity) {
  // Every producer done, nothing buffered, every consumer available: ask for the sums.
  auto check_end = [=] {
    auto& s = self->state;
    if (s.producers_done == producers->size() && s.buffer.empty()
        && s.available.size() == consumers->size()) {
      for (auto& c : *consumers)
        self->send(c, sum_atom::value);
      self->quit(); // no producer or consumer sends to it again
    }
  };
  return {
    [=](start_atom) {
      // Every consumer available, in index order.
      for (u64 c = 0; c < consumers->size(); ++c)
        self->state.available.push_back(c);
      for (auto& p : *producers)
        self->send(p, produce_atom::value);
    },
    [=](item_atom, u64 x, u64 p) {
      auto& s = self->state;
      if (!s.available.empty()) {
        const u64 c = s.available.front();
        s.available.pop_front();
        self->send((*consumers)[c], consume_atom::value, x);
        self->send((*producers)[p], produce_atom::value);
      } else if (s.buffer.size() < capacity) {
        s.buffer.push_back(x);
        self->send((*producers)[p], produce_atom::value);
      } else {
        s.waiting.emplace_back(x, p); // its producer is not asked yet
      }
    },
    [=](avail_atom, u64 c) {
      auto& s = self->state;
      if (!s.buffer.empty()) {
        self->send((*consumers)[c], consume_atom::value, s.buffer.front());
        s.buffer.pop_front();
        if (!s.waiting.empty()) {
          auto w = s.waiting.front();
          s.waiting.pop_front();
          s.buffer.push_back(w.first);
          self->send((*producers)[w.second], produce_atom::value);
        }
      } else {
        s.available.push_back(c);
        check_end();
      }
    },
    [=](pdone_atom) {
      self->state.producers_done += 1;
      check_end();
    },
  };
}

struct bb_producer_state {
  u64 made = 0;
};

caf::behavior bb_producer(caf::stateful_actor<bb_producer_state>* self, caf::actor manager,
                          u64 index, u64 items, u64 cost) {
  return {
    [=](produce_atom) {
      auto& s = self->state;
      if (s.made < items) {
        const u64 x = busy(index * items + s.made, cost);
        s.made += 1;
        self->send(manager, item_atom::value, x, index);
      } else {
        self->send(manager, pdone_atom::value);
        self->quit(); // never asked again
      }
    },
  };
}

struct bb_consumer_state {
  u64 sum = 0;
};

caf::behavior bb_consumer(caf::stateful_actor<bb_consumer_state>* self, caf::actor main,
                          caf::actor manager, u64 index, u64 cost) {
  return {
    [=](consume_atom, u64 x) {
      self->state.sum += busy(x, cost);
      self->send(manager, avail_atom::value, index);
    },
    [=](sum_atom) {
      self->send(main, done_atom::value, self->state.sum);
      self->quit();
    },
  };
}

outcome run_bounded_buffer(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n_producers = p.get("producers");
  auto n_consumers = p.get("consumers");
  auto items = p.get("items");
  auto capacity = p.get("buffer");
  auto cost = p.get("cost");
  if (n_producers == 0 || n_consumers == 0 || capacity == 0)
    throw std::runtime_error("bounded-buffer: producers, consumers and buffer must be positive");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto producers = std::make_shared<std::vector<caf::actor>>();
  auto consumers = std::make_shared<std::vector<caf::actor>>();
  // The manager needs the producers and consumers and they need the manager: the lists are
  // filled before the manager starts (it only reads them in its handlers).
  auto manager = sys.spawn(bb_manager, producers, consumers, capacity);
  producers->reserve(n_producers);
  for (u64 i = 0; i < n_producers; ++i)
    producers->push_back(sys.spawn(bb_producer, manager, i, items, cost));
  consumers->reserve(n_consumers);
  for (u64 i = 0; i < n_consumers; ++i)
    consumers->push_back(sys.spawn(bb_consumer, main, manager, i, cost));
  self->send(manager, start_atom::value);
  manager = nullptr;
  auto total = collect(self, n_consumers);
  return {since(t0), total};
}

// ---- sleeping-barber (customers, room, arrival, cut): Savina's sleeping barber --------------
struct customer_state {
  u64 token = 0;
};

caf::behavior sb_customer(caf::stateful_actor<customer_state>* self, caf::actor factory, u64 id,
                          u64 token) {
  self->state.token = token;
  return {
    [=](full_atom) {
      // Savina's retry: back to the factory, which sends it to the room again.
      self->send(factory, returned_atom::value, caf::actor_cast<caf::actor>(self),
                 self->state.token);
    },
    [=](cutdone_atom, u64 v) {
      self->send(factory, served_atom::value, id, v);
      self->quit();
    },
  };
}

struct room_state {
  std::deque<std::pair<caf::actor, u64>> seated; // (customer, token), longest-seated first
  bool asleep = true;
};

caf::behavior sb_room(caf::stateful_actor<room_state>* self, caf::actor barber, u64 chairs) {
  return {
    [=](enter_atom, caf::actor& c, u64 token) {
      auto& s = self->state;
      if (s.seated.size() == chairs) {
        self->send(c, full_atom::value);
      } else if (s.asleep) {
        s.asleep = false;
        self->send(barber, cut_atom::value, std::move(c), token);
      } else {
        s.seated.emplace_back(std::move(c), token);
      }
    },
    [=](nextcust_atom) {
      auto& s = self->state;
      if (s.seated.empty()) {
        s.asleep = true;
      } else {
        auto next = std::move(s.seated.front());
        s.seated.pop_front();
        self->send(barber, cut_atom::value, std::move(next.first), next.second);
      }
    },
  };
}

caf::behavior sb_barber(caf::event_based_actor* self, u64 cut) {
  return {
    [=](cut_atom, const caf::actor& c, u64 token) {
      self->send(c, cutdone_atom::value, busy(token, cut));
      // Cut comes from the room only: ask it for the next customer.
      self->send(caf::actor_cast<caf::actor>(self->current_sender()), nextcust_atom::value);
    },
  };
}

struct factory_state {
  u64 served = 0;
  u64 sum = 0;
};

caf::behavior sb_factory(caf::stateful_actor<factory_state>* self, caf::actor main,
                         caf::actor room, u64 customers, u64 arrival) {
  return {
    [=](start_atom) {
      // All arrivals in this one behaviour: each customer's token, its actor, its Enter.
      auto me = caf::actor_cast<caf::actor>(self);
      for (u64 id = 0; id < customers; ++id) {
        const u64 token = busy(id, arrival);
        auto c = self->spawn(sb_customer, me, id, token);
        self->send(room, enter_atom::value, std::move(c), token);
      }
      if (customers == 0) {
        self->send(main, done_atom::value, u64{0});
        self->quit();
      }
    },
    [=](returned_atom, caf::actor& c, u64 token) {
      self->send(room, enter_atom::value, std::move(c), token);
    },
    [=](served_atom, u64 /*id*/, u64 v) {
      auto& s = self->state;
      s.sum += v;
      if (++s.served == customers) {
        self->send(main, done_atom::value, s.sum);
        self->quit();
      }
    },
  };
}

outcome run_sleeping_barber(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto customers = p.get("customers");
  auto chairs = p.get("room");
  auto arrival = p.get("arrival");
  auto cut = p.get("cut");
  if (chairs == 0)
    throw std::runtime_error("sleeping-barber: room must be positive");
  auto t0 = clock_type::now();
  auto barber = sys.spawn(sb_barber, cut);
  auto room = sys.spawn(sb_room, barber, chairs);
  auto factory = sys.spawn(sb_factory, caf::actor{self}, room, customers, arrival);
  self->send(factory, start_atom::value);
  factory = nullptr;
  auto total = collect(self, 1);
  auto secs = since(t0);
  shut({room, barber});
  return {secs, total};
}

// ---- cigarette-smokers (smokers, rounds, smoke): Savina's cigarette smokers -----------------
struct arbiter_state {
  u64 started = 0;
};

caf::behavior cig_arbiter(caf::stateful_actor<arbiter_state>* self, actor_list smokers,
                          u64 rounds, u64 smoke) {
  // Round r: the ingredients for smoker r * 7919 mod smokers, who smokes
  // r * 104729 mod smoke + 10 steps.
  auto round = [=](u64 r) {
    const u64 n = smokers->size();
    self->send((*smokers)[r * 7919 % n], smoke_atom::value, r, r * 104729 % smoke + 10);
  };
  auto finish = [=] {
    for (auto& s : *smokers)
      self->send(s, smkexit_atom::value);
    self->quit(); // no smoker sends it anything more
  };
  return {
    [=](start_atom) {
      if (rounds == 0)
        finish();
      else
        round(0);
    },
    [=](started_atom) {
      auto r = ++self->state.started;
      if (r == rounds)
        finish();
      else
        round(r);
    },
  };
}

struct smoker_state {
  u64 sum = 0;
};

caf::behavior cig_smoker(caf::stateful_actor<smoker_state>* self, caf::actor main,
                         caf::actor arbiter) {
  return {
    [=](smoke_atom, u64 r, u64 time) {
      self->send(arbiter, started_atom::value);
      self->state.sum += busy(r, time);
    },
    [=](smkexit_atom) {
      self->send(main, done_atom::value, self->state.sum);
      self->quit();
    },
  };
}

outcome run_cigarette_smokers(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto n = p.get("smokers");
  auto rounds = p.get("rounds");
  auto smoke = p.get("smoke");
  if (n == 0 || smoke == 0)
    throw std::runtime_error("cigarette-smokers: smokers and smoke must be positive");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto smokers = std::make_shared<std::vector<caf::actor>>();
  // The list is filled before the arbiter starts (it only reads it in its handlers).
  auto arbiter = sys.spawn(cig_arbiter, smokers, rounds, smoke);
  smokers->reserve(n);
  for (u64 i = 0; i < n; ++i)
    smokers->push_back(sys.spawn(cig_smoker, main, arbiter));
  self->send(arbiter, start_atom::value);
  arbiter = nullptr;
  auto total = collect(self, n);
  return {since(t0), total};
}

// ---- pipeline-lanes (items, lanes, cost), pipeline-chain (items, stages, cost) ------------
// main sends every item; the sink adds what arrives and reports the sum after `items`.
struct sink_state {
  u64 got = 0;
  u64 sum = 0;
};

caf::behavior pipe_sink(caf::stateful_actor<sink_state>* self, caf::actor main, u64 items) {
  return {
    [=](item_atom, u64 x) {
      auto& s = self->state;
      s.sum += x;
      if (++s.got == items) {
        self->send(main, done_atom::value, s.sum);
        self->quit();
      }
    },
  };
}

caf::behavior pipe_splitter(caf::event_based_actor* self, std::vector<caf::actor> lanes) {
  return {
    [=](item_atom a, u64 i) { self->send(lanes[i % lanes.size()], a, i); },
  };
}

caf::behavior pipe_lane(caf::event_based_actor* self, caf::actor merger, u64 cost) {
  return {
    [=](item_atom a, u64 i) { self->send(merger, a, busy(i, cost)); },
  };
}

caf::behavior pipe_merger(caf::event_based_actor* self, caf::actor sink) {
  return {
    [=](item_atom a, u64 x) { self->send(sink, a, x); },
  };
}

outcome run_pipeline_lanes(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto items = p.get("items");
  auto n = p.get("lanes");
  auto cost = p.get("cost");
  if (items == 0 || n == 0)
    throw std::runtime_error("pipeline-lanes: items and lanes must be positive");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto sink = sys.spawn(pipe_sink, main, items);
  auto merger = sys.spawn(pipe_merger, sink);
  std::vector<caf::actor> lanes;
  lanes.reserve(n);
  for (u64 i = 0; i < n; ++i)
    lanes.push_back(sys.spawn(pipe_lane, merger, cost));
  auto splitter = sys.spawn(pipe_splitter, lanes);
  for (u64 i = 0; i < items; ++i)
    self->send(splitter, item_atom::value, i);
  u64 sum = 0;
  self->receive([&](done_atom, u64 v) { sum = v; });
  auto secs = since(t0);
  lanes.push_back(splitter);
  lanes.push_back(merger);
  shut(lanes);
  return {secs, sum};
}

caf::behavior pipe_stage(caf::event_based_actor* self, caf::actor next, u64 index, u64 cost) {
  return {
    [=](item_atom a, u64 x) { self->send(next, a, busy(x + index, cost)); },
  };
}

outcome run_pipeline_chain(caf::actor_system& sys, caf::scoped_actor& self, const params& p) {
  auto items = p.get("items");
  auto stages = p.get("stages");
  auto cost = p.get("cost");
  if (items == 0 || stages == 0)
    throw std::runtime_error("pipeline-chain: items and stages must be positive");
  auto t0 = clock_type::now();
  caf::actor main{self};
  auto next = sys.spawn(pipe_sink, main, items);
  std::vector<caf::actor> chain;
  chain.reserve(stages);
  for (u64 i = stages; i-- > 0;) {
    next = sys.spawn(pipe_stage, next, i, cost);
    chain.push_back(next);
  }
  for (u64 i = 0; i < items; ++i)
    self->send(next, item_atom::value, i);
  u64 sum = 0;
  self->receive([&](done_atom, u64 v) { sum = v; });
  auto secs = since(t0);
  shut(chain);
  return {secs, sum};
}

} // namespace bench

namespace {

bool known_bench(const std::string& b) {
  static const char* names[] = {"static-send", "dynamic-send", "executor", "repeat",
                                "matrix", "balance-one", "balance-multi", "ping-pong",
                                "counting", "fork-join-throughput", "fork-join-creation",
                                "thread-ring", "chameneos", "big", "dictionary", "banking", "logistic-map",
                                "bounded-buffer", "sleeping-barber", "cigarette-smokers",
                                "pipeline-lanes", "pipeline-chain"};
  for (auto n : names)
    if (b == n)
      return true;
  return false;
}

bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty())
    return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

} // namespace

// ---- idle benchmarks (actorium-bench idle): idle CPU, wake-up latency, sparse load ----------
namespace idle {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct latencies {
  std::mutex m;
  std::vector<double> us;
  std::atomic<std::size_t> n{0};
  void record(int64_t sent) {
    double d = (now_ns() - sent) / 1e3;
    std::lock_guard<std::mutex> g(m);
    us.push_back(d);
    n.fetch_add(1, std::memory_order_release);
  }
};

void wait_for(latencies& l, std::size_t n) {
  auto t0 = std::chrono::steady_clock::now();
  while (l.n.load(std::memory_order_acquire) < n) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(30)) {
      std::fprintf(stderr, "pings lost\n");
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Same protocol as actorium-bench's `idle-exec`: prints `IDLE ...`.
int run(const std::string& policy, std::size_t threads, double secs, std::size_t pings) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", threads);
  cfg.set("scheduler.policy",
          policy == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
  auto lat = std::make_shared<latencies>();
  double idle_pct = 0, sparse_ms = 0, med = 0, p99 = 0;
  std::size_t sent = 0;
  {
    caf::actor_system sys{cfg};
    auto a = sys.spawn([lat]() -> caf::behavior {
      return {[lat](int64_t t) { lat->record(t); }};
    });
    caf::anon_send(a, now_ns());
    wait_for(*lat, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    { std::lock_guard<std::mutex> g(lat->m); lat->us.clear(); }
    // 1. Idle.
    auto c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    idle_pct = (cpu_seconds() - c0) /
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 100;
    // 2. Wake-up latency.
    auto base = lat->n.load();
    for (std::size_t i = 0; i < pings; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      caf::anon_send(a, now_ns());
    }
    wait_for(*lat, base + pings);
    std::vector<double> v;
    { std::lock_guard<std::mutex> g(lat->m); v.swap(lat->us); }
    std::sort(v.begin(), v.end());
    med = v[v.size() / 2];
    p99 = v[(v.size() - 1) * 99 / 100];
    // 3. Sparse load.
    base = lat->n.load();
    c0 = cpu_seconds();
    t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs) {
      caf::anon_send(a, now_ns());
      ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    wait_for(*lat, base + sent);
    sparse_ms = (cpu_seconds() - c0) * 1e3;
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  std::printf("IDLE idle_pct=%.4f wake_med_us=%.1f wake_p99_us=%.1f sparse_cpu_ms=%.2f sparse_msgs=%zu\n",
              idle_pct, med, p99, sparse_ms, sent);
  return 0;
}

} // namespace idle

// ---- ask benchmark (actorium-bench ask): request/reply round trips ----------------------------
namespace askb {

// Same protocol as actorium-bench's `ask-exec`: prints `ASK ...`. The server answers x with
// x + 1; it is asked n times in a row from a `scoped_actor` (CAF's blocking actor for code
// outside actors: `request(..).receive(..)`), each round trip timed, then n times by an
// event-based client actor chaining `request(..).then(..)` inside its behaviour.
int run(const std::string& policy, std::size_t threads, uint64_t n) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", threads);
  cfg.set("scheduler.policy",
          policy == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
  double med = 0, p99 = 0, outside = 0, inside = 0;
  uint64_t sum = 0;
  {
    caf::actor_system sys{cfg};
    auto srv = sys.spawn([]() -> caf::behavior {
      return {[](uint64_t x) -> uint64_t { return x + 1; }};
    });
    auto client = sys.spawn([srv](caf::event_based_actor* self) -> caf::behavior {
      return {[=](uint64_t count, bool) -> caf::result<uint64_t> {
        auto rp = self->make_response_promise<uint64_t>();
        auto total = std::make_shared<uint64_t>(0);
        auto next = std::make_shared<std::function<void(uint64_t)>>();
        *next = [=](uint64_t x) mutable {
          if (x == count) {
            rp.deliver(*total);
            *next = nullptr;  // break the cycle
            return;
          }
          self->request(srv, caf::infinite, x).then([=](uint64_t y) {
            *total += y;
            (*next)(x + 1);
          });
        };
        (*next)(0);
        return rp;
      }};
    });
    caf::scoped_actor self{sys};
    auto ask = [&](uint64_t x) {
      uint64_t r = 0;
      self->request(srv, caf::infinite, x)
          .receive([&](uint64_t y) { r = y; },
                   [&](caf::error&) {
                     std::fprintf(stderr, "ask failed\n");
                     std::exit(1);
                   });
      return r;
    };
    for (uint64_t x = 0; x < 1000; ++x) ask(x);
    std::vector<double> lat;
    lat.reserve(n);
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t x = 0; x < n; ++x) {
      auto t = std::chrono::steady_clock::now();
      sum += ask(x);
      lat.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count());
    }
    outside = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sum != n * (n + 1) / 2) {
      std::fprintf(stderr, "checksum %llu\n", (unsigned long long)sum);
      return 1;
    }
    std::sort(lat.begin(), lat.end());
    med = lat[lat.size() / 2];
    p99 = lat[(lat.size() - 1) * 99 / 100];
    auto t1 = std::chrono::steady_clock::now();
    uint64_t got = 0;
    self->request(client, caf::infinite, n, true)
        .receive([&](uint64_t total) { got = total; },
                 [&](caf::error&) {
                   std::fprintf(stderr, "client failed\n");
                   std::exit(1);
                 });
    inside = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    if (got != n * (n + 1) / 2) {
      std::fprintf(stderr, "checksum (in actors) %llu\n", (unsigned long long)got);
      return 1;
    }
    self->send_exit(srv, caf::exit_reason::user_shutdown);
    self->send_exit(client, caf::exit_reason::user_shutdown);
  }
  std::printf("ASK med_us=%.2f p99_us=%.2f outside_s=%.4f inside_s=%.4f inside_us=%.3f checksum=%llu\n",
              med, p99, outside, inside, inside / n * 1e6, (unsigned long long)sum);
  return 0;
}

} // namespace askb

// ---- scale measurement (actorium-bench scale): n actors spawned, kept, each messaged once ------
namespace scaleb {

// A field of /proc/self/status in KiB (`VmRSS:`, `VmHWM:`); 0 if it cannot be read.
std::uint64_t proc_status_kib(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f)
    return 0;
  char line[256];
  std::uint64_t kib = 0;
  const std::size_t len = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, len) == 0) {
      kib = std::strtoull(line + len, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kib;
}

// The completion latch of `scale`, as the Rust systems' `Done`: each worker adds 1 to `sum` and
// decrements `remaining`; the one that brings `remaining` to 0 sends main the single
// `(done, sum)` (the checksum, n: counted, not assumed).
struct latch {
  std::atomic<std::uint64_t> remaining;
  std::atomic<std::uint64_t> sum{0};
  caf::actor main;
  latch(std::uint64_t n, caf::actor m) : remaining(n), main(std::move(m)) {}
};

// A fork-join-creation worker (the state and work of `bench::fjc_worker`) that completes through
// the shared latch instead of a report per actor: one message (a bare integer), then it quits.
caf::behavior worker(caf::stateful_actor<bench::fjc_state>* self, std::shared_ptr<latch> l) {
  return {
    [=](std::uint64_t i) {
      auto& s = self->state;
      s.x = (s.x * 31 + i) % 1000003;
      l->sum.fetch_add(1, std::memory_order_relaxed);
      if (l->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1)
        self->send(l->main, bench::done_atom::value, l->sum.load(std::memory_order_acquire));
      self->quit();
    },
  };
}

// Same protocol as actorium-bench's `scale-exec`: prints `SCALE ...`. The resident set is read
// before the actor_system exists; the clock starts once it and main's scoped_actor are up. n
// scale workers (`worker`: fjc_worker's state, a shared completion latch) are spawned from main
// and their handles kept in a vector; then each gets one integer and quits; the last to finish
// sends main the one completion message. The peak (VmHWM) is read as soon as it arrives.
int run(const std::string& policy, std::size_t threads, std::uint64_t n) {
  using namespace bench;
  const auto base = proc_status_kib("VmRSS:");
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", threads);
  cfg.set("scheduler.policy",
          policy == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
  double spawn_s = 0, msg_s = 0;
  std::uint64_t spawned = 0, peak = 0, sum = 0;
  {
    caf::actor_system sys{cfg};
    {
      caf::scoped_actor self{sys};
      caf::actor main_actor{self};
      auto t0 = clock_type::now();
      auto l = std::make_shared<latch>(n, main_actor);
      std::vector<caf::actor> ws;
      ws.reserve(n);
      for (u64 i = 0; i < n; ++i)
        ws.push_back(sys.spawn(worker, l));
      spawn_s = since(t0);
      spawned = proc_status_kib("VmRSS:");
      auto t1 = clock_type::now();
      for (u64 i = 0; i < n; ++i)
        self->send(ws[i], i);
      self->receive([&](done_atom, u64 v) { sum = v; });
      msg_s = since(t1);
      peak = proc_status_kib("VmHWM:");
    }
    // ~actor_system waits until every actor has terminated.
  }
  if (sum != n) {
    std::fprintf(stderr, "checksum: %llu actors counted, expected %llu\n", (unsigned long long)sum,
                 (unsigned long long)n);
    return 1;
  }
  std::printf("SCALE n=%llu spawn_s=%.4f msg_s=%.4f base_kib=%llu spawned_kib=%llu peak_kib=%llu "
              "checksum=%llu\n",
              (unsigned long long)n, spawn_s, msg_s, (unsigned long long)base,
              (unsigned long long)spawned, (unsigned long long)peak, (unsigned long long)sum);
  std::fflush(stdout);
  return 0;
}

} // namespace scaleb

int main(int argc, char** argv) {
  using namespace bench;
  // caf-bench ask <stealing|sharing> <threads> <n>
  if (argc == 5 && std::string(argv[1]) == "ask") {
    u64 threads = 0, n = 0;
    if (!parse_u64(argv[3], threads) || threads == 0 || !parse_u64(argv[4], n) || n == 0) {
      std::fprintf(stderr, "usage: %s ask <stealing|sharing> <threads> <n>\n", argv[0]);
      return 1;
    }
    return askb::run(argv[2], threads, n);
  }
  // caf-bench scale <stealing|sharing> <threads> <n>
  if (argc == 5 && std::string(argv[1]) == "scale") {
    u64 threads = 0, n = 0;
    std::string policy = argv[2];
    if ((policy != "stealing" && policy != "sharing") || !parse_u64(argv[3], threads) ||
        threads == 0 || !parse_u64(argv[4], n) || n == 0) {
      std::fprintf(stderr, "usage: %s scale <stealing|sharing> <threads> <n>\n", argv[0]);
      return 1;
    }
    return scaleb::run(policy, threads, n);
  }
  // caf-bench idle <stealing|sharing> <threads> <secs> <pings>
  if (argc == 6 && std::string(argv[1]) == "idle") {
    u64 threads = 0, pings = 0;
    if (!parse_u64(argv[3], threads) || threads == 0 || !parse_u64(argv[5], pings)) {
      std::fprintf(stderr, "usage: %s idle <stealing|sharing> <threads> <secs> <pings>\n", argv[0]);
      return 1;
    }
    return idle::run(argv[2], threads, std::atof(argv[4]), pings);
  }

  if (argc < 4) {
    std::fprintf(stderr, "usage: %s <bench> <stealing|sharing> <threads> k=v ...\n", argv[0]);
    return 1;
  }
  std::string name = argv[1];
  std::string policy = argv[2];
  if (!known_bench(name)) {
    std::fprintf(stderr, "unknown benchmark: %s\n", name.c_str());
    return 2;
  }
  if (name == "balance-one" || name == "balance-multi") {
    std::fprintf(stderr, "n/a: CAF cannot place actors on chosen workers\n");
    return 3;
  }
  if (policy != "stealing" && policy != "sharing") {
    std::fprintf(stderr, "unknown scheduler policy: %s (stealing|sharing)\n", policy.c_str());
    return 1;
  }
  u64 threads = 0;
  if (!parse_u64(argv[3], threads) || threads == 0) {
    std::fprintf(stderr, "bad thread count: %s\n", argv[3]);
    return 1;
  }
  params p;
  for (int i = 4; i < argc; ++i) {
    std::string kv = argv[i];
    auto eq = kv.find('=');
    u64 v = 0;
    if (eq == std::string::npos || eq == 0 || !parse_u64(kv.substr(eq + 1), v)) {
      std::fprintf(stderr, "bad parameter: %s (expected name=non-negative integer)\n",
                   kv.c_str());
      return 1;
    }
    p.kv[kv.substr(0, eq)] = v;
  }
  try {
    // Data set-up outside the timed region.
    std::shared_ptr<const matrices> mats;
    if (name == "matrix")
      mats = make_matrices(p.get("n"));
    caf::actor_system_config cfg;
    cfg.set("scheduler.max-threads", static_cast<std::size_t>(threads));
    cfg.set("scheduler.policy",
            policy == "stealing" ? caf::atom("stealing") : caf::atom("sharing"));
    outcome r{0, 0};
    {
      caf::actor_system sys{cfg};
      {
        caf::scoped_actor self{sys};
        if (name == "static-send")
          r = run_static_send(sys, self, p);
        else if (name == "dynamic-send")
          r = run_dynamic_send(sys, self, p);
        else if (name == "executor")
          r = run_executor(sys, self, p);
        else if (name == "repeat")
          r = run_repeat(sys, self, p);
        else if (name == "matrix")
          r = run_matrix_impl(sys, self, p.get("n"), mats);
        else if (name == "ping-pong")
          r = run_ping_pong(sys, self, p);
        else if (name == "counting")
          r = run_counting(sys, self, p);
        else if (name == "fork-join-throughput")
          r = run_fj_throughput(sys, self, p);
        else if (name == "fork-join-creation")
          r = run_fj_creation(sys, self, p);
        else if (name == "thread-ring")
          r = run_thread_ring(sys, self, p);
        else if (name == "chameneos")
          r = run_chameneos(sys, self, p);
        else if (name == "big")
          r = run_big(sys, self, p);
        else if (name == "dictionary")
          r = run_dictionary(sys, self, p);
        else if (name == "banking")
          r = run_banking(sys, self, p);
        else if (name == "logistic-map")
          r = run_logistic_map(sys, self, p);
        else if (name == "bounded-buffer")
          r = run_bounded_buffer(sys, self, p);
        else if (name == "sleeping-barber")
          r = run_sleeping_barber(sys, self, p);
        else if (name == "cigarette-smokers")
          r = run_cigarette_smokers(sys, self, p);
        else if (name == "pipeline-lanes")
          r = run_pipeline_lanes(sys, self, p);
        else if (name == "pipeline-chain")
          r = run_pipeline_chain(sys, self, p);
      }
      // ~actor_system waits until every actor has terminated.
    }
    std::printf("RESULT seconds=%.6f checksum=%llu\n", r.seconds,
                static_cast<unsigned long long>(r.checksum));
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
  return 0;
}
