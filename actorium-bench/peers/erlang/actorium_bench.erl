%% actorium-bench workloads on Erlang/OTP (plain processes: spawn + receive loops).
%%
%% The contract is actorium-bench/BENCHMARKS.md. Invocation:
%%
%%   erl +S T:T -noshell -pa peers/erlang/ebin -run actorium_bench main <bench> k=v k=v ...
%%
%% Prints exactly one line `RESULT seconds=<float> checksum=<integer>` to stdout and halts
%% with 0. Errors go to stderr with exit status 1, an unknown benchmark exits 2, and the
%% placement benchmarks (balance-one, balance-multi) exit 3 with "n/a" on stderr.
%%
%% "main" of the contract is the process that runs main/1: it starts the clock after the
%% arguments are parsed (and, for matrix, after X and Y are built), creates the actors, and
%% stops the clock when it has received the final message(s).
%%
%% Actors whose termination the contract does not specify (repeat's servers,
%% ping-pong's Pong, thread-ring's ring, big's actors) are left idle in `receive` when the work
%% is done; erlang:halt/1 ends them (dictionary's map, banking's accounts, logistic-map's
%% series and sleeping-barber's room and barber are told to stop after the clock has stopped).
%% No work is left running when the clock stops.
-module(actorium_bench).
-export([main/0, main/1, idle/1, ask/1, scale/1]).
-behaviour(gen_server).
-export([init/1, handle_call/3, handle_cast/2]).

-define(FJ_MOD, 1000003).

%% ---- entry point -----------------------------------------------------------------------------

main([Bench | Args]) ->
    case bench_fun(Bench) of
        unknown ->
            io:format(standard_error, "unknown benchmark: ~s~n", [Bench]),
            erlang:halt(2);
        na ->
            io:format(standard_error, "n/a: Erlang cannot place processes on chosen schedulers~n", []),
            erlang:halt(3);
        Fun ->
            try Fun(parse(Args)) of
                {Seconds, Checksum} ->
                    io:format("RESULT seconds=~.6f checksum=~B~n", [Seconds, Checksum]),
                    erlang:halt(0)
            catch
                throw:{fail, Msg} ->
                    io:format(standard_error, "~s: ~s~n", [Bench, Msg]),
                    erlang:halt(1);
                Class:Reason:Stack ->
                    io:format(standard_error, "~s: ~p:~p~n~p~n", [Bench, Class, Reason, Stack]),
                    erlang:halt(1)
            end
    end;
main([]) ->
    main().

%% `-run actorium_bench main` without arguments calls main/0.
main() ->
    io:format(standard_error, "usage: -run actorium_bench main <bench> k=v ...~n", []),
    erlang:halt(1).

bench_fun("static-send") -> fun static_send/1;
bench_fun("dynamic-send") -> fun dynamic_send/1;
bench_fun("executor") -> fun executor/1;
bench_fun("repeat") -> fun repeat/1;
bench_fun("matrix") -> fun matrix/1;
bench_fun("balance-one") -> na;
bench_fun("balance-multi") -> na;
bench_fun("ping-pong") -> fun ping_pong/1;
bench_fun("counting") -> fun counting/1;
bench_fun("fork-join-throughput") -> fun fj_throughput/1;
bench_fun("fork-join-creation") -> fun fj_creation/1;
bench_fun("thread-ring") -> fun thread_ring/1;
bench_fun("chameneos") -> fun chameneos/1;
bench_fun("big") -> fun big/1;
bench_fun("dictionary") -> fun dictionary/1;
bench_fun("banking") -> fun banking/1;
bench_fun("logistic-map") -> fun logistic_map/1;
bench_fun("bounded-buffer") -> fun bounded_buffer/1;
bench_fun("sleeping-barber") -> fun sleeping_barber/1;
bench_fun("cigarette-smokers") -> fun cigarette_smokers/1;
bench_fun("pipeline-lanes") -> fun pipeline_lanes/1;
bench_fun("pipeline-chain") -> fun pipeline_chain/1;
bench_fun(_) -> unknown.

%% name=value pairs of non-negative integers -> #{Name => Value}.
parse(Args) ->
    maps:from_list([parse_one(A) || A <- Args]).

parse_one(A) ->
    case string:split(A, "=") of
        [K, V] when K =/= "" ->
            try list_to_integer(V) of
                I when I >= 0 -> {K, I};
                _ -> fail("bad parameter ~s (not a non-negative integer)", [A])
            catch
                error:badarg -> fail("bad parameter ~s (not a non-negative integer)", [A])
            end;
        _ ->
            fail("bad parameter ~s (expected name=value)", [A])
    end.

fail(Fmt, Args) ->
    throw({fail, lists:flatten(io_lib:format(Fmt, Args))}).

param(Params, Name) ->
    case maps:find(Name, Params) of
        {ok, V} -> V;
        error -> fail("missing parameter ~s", [Name])
    end.

%% The clock: monotonic time in native units, reported as seconds.
now_ns() -> erlang:monotonic_time().

seconds_since(T0) ->
    erlang:convert_time_unit(erlang:monotonic_time() - T0, native, nanosecond) / 1.0e9.

%% main receives `Count` reports `{done, V}` and returns the sum of the V.
collect(0, Acc) -> Acc;
collect(Count, Acc) ->
    receive
        {done, V} -> collect(Count - 1, Acc + V)
    end.

%% ---- static-send (n) -------------------------------------------------------------------------

static_send(P) ->
    N = param(P, "n"),
    T0 = now_ns(),
    Main = self(),
    A = spawn(fun() -> ss_loop(0, N, Main) end),
    A ! tick,
    Count = collect(1, 0),
    {seconds_since(T0), Count}.

ss_loop(Count, N, Main) ->
    receive
        tick ->
            C = Count + 1,
            if
                C < N ->
                    self() ! tick,
                    ss_loop(C, N, Main);
                true ->
                    Main ! {done, C}
            end
    end.

%% ---- dynamic-send (n) ------------------------------------------------------------------------

dynamic_send(P) ->
    N = param(P, "n"),
    T0 = now_ns(),
    Main = self(),
    A = spawn(fun() -> ds_actor(N, Main) end),
    A ! {go, 1},
    Last = collect(1, 0),
    {seconds_since(T0), Last}.

ds_actor(N, Main) ->
    receive
        {go, K} when K < N ->
            Next = spawn(fun() -> ds_actor(N, Main) end),
            Next ! {go, K + 1};
        {go, K} ->
            Main ! {done, K}
    end.
%% ...and the actor terminates (the function returns).

%% ---- executor (actors, group, rounds) --------------------------------------------------------

executor(P) ->
    Actors = param(P, "actors"),
    Group = param(P, "group"),
    Rounds = param(P, "rounds"),
    Group > 0 andalso Actors rem Group =:= 0 orelse
        fail("actors (~B) must be a multiple of group (~B > 0)", [Actors, Group]),
    R = Rounds * Group,
    T0 = now_ns(),
    Main = self(),
    %% Each group: spawn its members (they wait for the group's addresses), tell them the
    %% group, then main sends every actor one `msg`.
    Groups =
        [begin
             Members = list_to_tuple(
                 [spawn(fun() -> ex_init(Local, Group, R, Main) end)
                  || Local <- lists:seq(0, Group - 1)]),
             [M ! {group, Members} || M <- tuple_to_list(Members)],
             Members
         end
         || _ <- lists:seq(1, Actors div Group)],
    [M ! msg || Members <- Groups, M <- tuple_to_list(Members)],
    Total = collect(Actors, 0),
    {seconds_since(T0), Total}.

ex_init(Local, Group, R, Main) ->
    receive
        {group, Members} -> ex_loop(Members, Local, Group, R, 0, 0, Main)
    end.

ex_loop(Members, Local, Group, R, Sent, Recv, Main) ->
    receive
        msg ->
            Recv1 = Recv + 1,
            Sent1 =
                if
                    Sent < R ->
                        element((Local + Sent) rem Group + 1, Members) ! msg,
                        Sent + 1;
                    true ->
                        Sent
                end,
            if
                Recv1 =:= R + 1 -> Main ! {done, Recv1};
                true -> ex_loop(Members, Local, Group, R, Sent1, Recv1, Main)
            end
    end.

%% ---- repeat (servers, reps) ------------------------------------------------------------------

repeat(P) ->
    Servers = param(P, "servers"),
    Reps = param(P, "reps"),
    T0 = now_ns(),
    Main = self(),
    Client = spawn(fun() -> rp_client_init(Servers, Reps, Main) end),
    ServerPids = [spawn(fun() -> rp_server(Idx, Client) end) || Idx <- lists:seq(0, Servers - 1)],
    Client ! {start, ServerPids},
    Sum = collect(1, 0),
    {seconds_since(T0), Sum}.

rp_client_init(Servers, Reps, Main) ->
    receive
        {start, ServerPids} -> rp_client_rep(ServerPids, Servers, Reps, 0, Main)
    end.

rp_client_rep(_ServerPids, _Servers, 0, Sum, Main) ->
    Main ! {done, Sum};
rp_client_rep(ServerPids, Servers, RepsLeft, Sum, Main) ->
    rp_send(ServerPids),
    Sum1 = rp_gather(Servers, Sum),
    rp_client_rep(ServerPids, Servers, RepsLeft - 1, Sum1, Main).

rp_send([]) -> ok;
rp_send([S | Ss]) ->
    S ! req,
    rp_send(Ss).

rp_gather(0, Sum) -> Sum;
rp_gather(Left, Sum) ->
    receive
        {rep, Idx} -> rp_gather(Left - 1, Sum + Idx + 1)
    end.

rp_server(Idx, Client) ->
    receive
        req ->
            Client ! {rep, Idx},
            rp_server(Idx, Client)
    end.

%% ---- matrix (n) ------------------------------------------------------------------------------
%%
%% X and Y are built before the clock and stored with persistent_term: persistent_term:get/1
%% returns the stored term without copying it to the caller's heap, so every row actor reads
%% the one shared copy. X is a tuple of rows (each row a list of integers); Y is stored column
%% by column (a list of its n columns, each a list), so that Z[i][j] = X[i] . Y[:,j] is a walk
%% over two lists -- the fastest layout on BEAM that we measured (faster than tuples with
%% element/2 and than binaries of u64). Every actor still computes its full row of Z (n dot
%% products of length n) and sends back the row sum.

matrix(P) ->
    N = param(P, "n"),
    Seq = lists:seq(0, N - 1),
    X = list_to_tuple([[(I + 2 * J) rem 7 || J <- Seq] || I <- Seq]),
    YCols = [[(3 * K + J) rem 5 || K <- Seq] || J <- Seq],
    persistent_term:put({?MODULE, matrix_x}, X),
    persistent_term:put({?MODULE, matrix_ycols}, YCols),
    T0 = now_ns(),
    Main = self(),
    [spawn(fun() -> mx_actor(Main) end) ! {row, I} || I <- Seq],
    Sum = collect(N, 0),
    {seconds_since(T0), Sum}.

mx_actor(Main) ->
    receive
        {row, I} ->
            Xi = element(I + 1, persistent_term:get({?MODULE, matrix_x})),
            YCols = persistent_term:get({?MODULE, matrix_ycols}),
            Main ! {done, mx_row(Xi, YCols, 0)}
    end.

%% Sum over j of Z[i][j], each Z[i][j] computed as a dot product.
mx_row(_Xi, [], Sum) -> Sum;
mx_row(Xi, [Col | Cols], Sum) -> mx_row(Xi, Cols, Sum + mx_dot(Xi, Col, 0)).

mx_dot([A | As], [B | Bs], Acc) -> mx_dot(As, Bs, Acc + A * B);
mx_dot([], [], Acc) -> Acc.

%% ---- ping-pong (n) ---------------------------------------------------------------------------

ping_pong(P) ->
    N = param(P, "n"),
    T0 = now_ns(),
    Main = self(),
    Pong = spawn(fun pong_init/0),
    Ping = spawn(fun() -> ping_init(Pong, N, Main) end),
    Pong ! {ping, Ping},
    Ping ! start,
    Count = collect(1, 0),
    {seconds_since(T0), Count}.

ping_init(Pong, N, Main) ->
    receive
        start ->
            if
                N > 0 ->
                    Pong ! ball,
                    ping_loop(Pong, 0, N, Main);
                true ->
                    Main ! {done, 0}
            end
    end.

ping_loop(Pong, Count, N, Main) ->
    receive
        ball ->
            C = Count + 1,
            if
                C < N ->
                    Pong ! ball,
                    ping_loop(Pong, C, N, Main);
                true ->
                    Main ! {done, C}
            end
    end.

pong_init() ->
    receive
        {ping, Ping} -> pong_loop(Ping)
    end.

pong_loop(Ping) ->
    receive
        ball ->
            Ping ! ball,
            pong_loop(Ping)
    end.

%% ---- counting (n) ----------------------------------------------------------------------------

counting(P) ->
    N = param(P, "n"),
    T0 = now_ns(),
    Main = self(),
    Counter = spawn(fun() -> counter_loop(0) end),
    Producer = spawn(fun() -> producer(Counter, N, Main) end),
    Producer ! start,
    Total = collect(1, 0),
    {seconds_since(T0), Total}.

producer(Counter, N, Main) ->
    receive
        start ->
            producer_send(Counter, N),
            Counter ! {get, self()},
            receive
                {total, Total} -> Main ! {done, Total}
            end
    end.

producer_send(_Counter, 0) -> ok;
producer_send(Counter, Left) ->
    Counter ! increment,
    producer_send(Counter, Left - 1).

counter_loop(Count) ->
    receive
        increment -> counter_loop(Count + 1);
        {get, From} -> From ! {total, Count}
    end.

%% ---- fork-join-throughput (actors, msgs) -----------------------------------------------------

fj_throughput(P) ->
    Actors = param(P, "actors"),
    Msgs = param(P, "msgs"),
    T0 = now_ns(),
    Main = self(),
    Workers = [spawn(fun() -> fjt_loop(0, 0, Msgs, Main) end) || _ <- lists:seq(1, Actors)],
    fjt_rounds(Workers, 0, Msgs),
    Total = fjt_collect(Actors, 0),
    {seconds_since(T0), Total}.

fjt_rounds(_Workers, R, Msgs) when R >= Msgs -> ok;
fjt_rounds(Workers, R, Msgs) ->
    fjt_send(Workers, {work, R}),
    fjt_rounds(Workers, R + 1, Msgs).

fjt_send([], _M) -> ok;
fjt_send([W | Ws], M) ->
    W ! M,
    fjt_send(Ws, M).

fjt_loop(Count, X, Msgs, Main) when Count >= Msgs ->
    %% X travels along so that the computation is not dead code; main ignores it.
    Main ! {done, Count, X};
fjt_loop(Count, X, Msgs, Main) ->
    receive
        {work, R} -> fjt_loop(Count + 1, (X * 31 + R) rem ?FJ_MOD, Msgs, Main)
    end.

%% main's receive for fork-join-throughput carries x as well.
fjt_collect(0, Acc) -> Acc;
fjt_collect(Count, Acc) ->
    receive
        {done, V, _X} -> fjt_collect(Count - 1, Acc + V)
    end.

%% ---- fork-join-creation (n) ------------------------------------------------------------------

fj_creation(P) ->
    N = param(P, "n"),
    T0 = now_ns(),
    Main = self(),
    fjc_spawn(0, N, Main),
    Total = fjt_collect(N, 0),
    {seconds_since(T0), Total}.

fjc_spawn(I, N, _Main) when I >= N -> ok;
fjc_spawn(I, N, Main) ->
    A = spawn(fun() -> fjc_actor(Main) end),
    A ! {work, I},
    fjc_spawn(I + 1, N, Main).

fjc_actor(Main) ->
    receive
        {work, I} ->
            X = (0 * 31 + I) rem ?FJ_MOD,
            Main ! {done, 1, X}
    end.

%% ---- thread-ring (actors, passes) ------------------------------------------------------------
%%
%% Actor i knows actor (i+1) % actors. Actor 0 is spawned first and told its successor once
%% the others exist; actors-1 .. 1 are spawned in reverse, each with its successor's address.
%% The actor that receives Token(0) reports its own index; main checks that it is
%% passes % actors (the token really went passes hops round the ring) and reports `passes`.

thread_ring(P) ->
    Actors = param(P, "actors"),
    Passes = param(P, "passes"),
    Actors > 0 orelse fail("actors must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    First = spawn(fun() -> tr_init(0, Main) end),
    Second = tr_spawn(Actors - 1, First, Main),
    First ! {next, Second},
    First ! {token, Passes},
    Last = collect(1, 0),
    Seconds = seconds_since(T0),
    Last =:= Passes rem Actors orelse
        fail("token stopped at actor ~B, expected ~B", [Last, Passes rem Actors]),
    {Seconds, Passes}.

%% Spawns actors Idx, Idx-1, ..., 1; returns actor 1 (or First if there is only one actor).
tr_spawn(0, Next, _Main) -> Next;
tr_spawn(Idx, Next, Main) ->
    A = spawn(fun() -> tr_loop(Idx, Next, Main) end),
    tr_spawn(Idx - 1, A, Main).

tr_init(Idx, Main) ->
    receive
        {next, Next} -> tr_loop(Idx, Next, Main)
    end.

tr_loop(Idx, Next, Main) ->
    receive
        {token, K} when K > 0 ->
            Next ! {token, K - 1},
            tr_loop(Idx, Next, Main);
        {token, _} ->
            Main ! {done, Idx},
            tr_loop(Idx, Next, Main)
    end.

%% ---- chameneos (creatures, meetings) ---------------------------------------------------------
%%
%% The mall stops (terminates) once it has sent `stop` to every creature.

chameneos(P) ->
    Creatures = param(P, "creatures"),
    Meetings = param(P, "meetings"),
    T0 = now_ns(),
    Main = self(),
    Mall = spawn(fun() -> mall_loop(none, 0, Meetings, 0, Creatures) end),
    [spawn(fun() -> creature_start(Mall, I rem 3, Main) end) || I <- lists:seq(0, Creatures - 1)],
    Total = collect(Creatures, 0),
    {seconds_since(T0), Total}.

mall_loop(_Waiting, _Done, _Meetings, Stopped, Creatures) when Stopped >= Creatures ->
    ok;
mall_loop(Waiting, Done, Meetings, Stopped, Creatures) ->
    receive
        {meet, From, Colour} when Done < Meetings ->
            case Waiting of
                none ->
                    mall_loop({From, Colour}, Done, Meetings, Stopped, Creatures);
                {Other, OtherColour} ->
                    From ! {paired, OtherColour},
                    Other ! {paired, Colour},
                    mall_loop(none, Done + 1, Meetings, Stopped, Creatures)
            end;
        {meet, From, _Colour} ->
            From ! stop,
            case Waiting of
                none ->
                    mall_loop(none, Done, Meetings, Stopped + 1, Creatures);
                {Other, _} ->
                    Other ! stop,
                    mall_loop(none, Done, Meetings, Stopped + 2, Creatures)
            end
    end.

creature_start(Mall, Colour, Main) ->
    Mall ! {meet, self(), Colour},
    creature_loop(Mall, Colour, 0, Main).

creature_loop(Mall, Colour, Count, Main) ->
    receive
        {paired, Other} ->
            NewColour = complement(Colour, Other),
            Mall ! {meet, self(), NewColour},
            creature_loop(Mall, NewColour, Count + 1, Main);
        stop ->
            Main ! {done, Count}
    end.

complement(A, A) -> A;
complement(A, B) -> 3 - A - B.

%% ---- big (actors, pings) ---------------------------------------------------------------------
%%
%% Peer choice: a per-process xorshift32 (Marsaglia 13/17/5; 32 bits so that every value stays
%% a BEAM small integer), seeded from the actor's index, picks uniformly among the other
%% actors-1 actors (an actor never pings itself; with one actor it pings itself).

big(P) ->
    Actors = param(P, "actors"),
    Pings = param(P, "pings"),
    Actors > 0 orelse fail("actors must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Pids = list_to_tuple(
        [spawn(fun() -> big_init(Idx, Pings, Main) end) || Idx <- lists:seq(0, Actors - 1)]),
    [A ! {start, Pids} || A <- tuple_to_list(Pids)],
    Total = collect(Actors, 0),
    {seconds_since(T0), Total}.

big_init(Idx, Pings, Main) ->
    receive
        {start, Peers} ->
            Rng0 = xorshift_seed(Idx),
            if
                Pings > 0 ->
                    Rng = big_ping(Peers, Idx, Rng0),
                    big_loop(Peers, Idx, Rng, 1, 0, Pings, Main);
                true ->
                    Main ! {done, 0},
                    big_loop(Peers, Idx, Rng0, 0, 0, Pings, Main)
            end
    end.

big_loop(Peers, Idx, Rng, Sent, Pongs, Pings, Main) ->
    receive
        {ping, From} ->
            From ! pong,
            big_loop(Peers, Idx, Rng, Sent, Pongs, Pings, Main);
        pong ->
            Pongs1 = Pongs + 1,
            if
                Pongs1 =:= Pings ->
                    Main ! {done, Pongs1},
                    %% Keeps answering the other actors' pings.
                    big_loop(Peers, Idx, Rng, Sent, Pongs1, Pings, Main);
                Sent < Pings ->
                    Rng1 = big_ping(Peers, Idx, Rng),
                    big_loop(Peers, Idx, Rng1, Sent + 1, Pongs1, Pings, Main);
                true ->
                    big_loop(Peers, Idx, Rng, Sent, Pongs1, Pings, Main)
            end
    end.

%% Sends Ping(self) to a random other actor; returns the new generator state.
big_ping(Peers, Idx, Rng) ->
    Rng1 = xorshift32(Rng),
    case tuple_size(Peers) of
        1 ->
            element(1, Peers) ! {ping, self()};
        Size ->
            J = Rng1 rem (Size - 1),
            Peer = if J >= Idx -> J + 1; true -> J end,
            element(Peer + 1, Peers) ! {ping, self()}
    end,
    Rng1.

xorshift_seed(Idx) ->
    %% Spread small indices over the 32-bit state; never zero.
    ((Idx + 1) * 16#9E3779B9) band 16#FFFFFFFF bor 1.

xorshift32(X0) ->
    X1 = X0 bxor ((X0 bsl 13) band 16#FFFFFFFF),
    X2 = X1 bxor (X1 bsr 17),
    X2 bxor ((X2 bsl 5) band 16#FFFFFFFF).

%% ---- idle benchmarks (actorium-bench idle) ------------------------------------------------------
%%
%%   erl +S T:T -noshell -pa peers/erlang/ebin -run actorium_bench idle <secs> <pings>
%%
%% One receiving process records, for each ping, the time from the send to its receive; the
%% sender is another process (Erlang has no outside threads), which sleeps 1 ms between the
%% wake-up pings and 5 ms between the sparse-load ones. CPU: the OS process's user + system
%% time (from /proc/self/stat, in clock ticks), as actorium-bench measures the others'.
%% Prints one `IDLE ...` line and halts.

idle([SecsS, PingsS]) ->
    Secs = list_to_float_any(SecsS),
    Pings = list_to_integer(PingsS),
    Self = self(),
    Rec = spawn(fun() -> recorder(Self, []) end),
    Rec ! {ping, erlang:monotonic_time(nanosecond)},
    wait_count(Rec, 1),
    timer:sleep(200),
    _ = take(Rec),
    %% 1. Idle.
    C0 = cpu_s(), T0 = erlang:monotonic_time(nanosecond),
    timer:sleep(round(Secs * 1000)),
    IdlePct = (cpu_s() - C0) / ((erlang:monotonic_time(nanosecond) - T0) / 1.0e9) * 100,
    %% 2. Wake-up latency.
    lists:foreach(fun(_) ->
                          timer:sleep(1),
                          Rec ! {ping, erlang:monotonic_time(nanosecond)}
                  end, lists:seq(1, Pings)),
    wait_count(Rec, Pings),
    Sorted = lists:sort(take(Rec)),
    Len = length(Sorted),
    Med = lists:nth(Len div 2 + 1, Sorted),
    P99 = lists:nth((Len - 1) * 99 div 100 + 1, Sorted),
    %% 3. Sparse load.
    C1 = cpu_s(), T1 = erlang:monotonic_time(nanosecond),
    Sent = sparse(Rec, T1, Secs, 0),
    wait_count(Rec, Sent),
    SparseMs = (cpu_s() - C1) * 1000,
    io:format("IDLE idle_pct=~.4f wake_med_us=~.1f wake_p99_us=~.1f sparse_cpu_ms=~.2f sparse_msgs=~B~n",
              [IdlePct, Med, P99, SparseMs, Sent]),
    erlang:halt(0).

list_to_float_any(S) ->
    try list_to_float(S) catch error:badarg -> float(list_to_integer(S)) end.

sparse(Rec, T0, Secs, Sent) ->
    case (erlang:monotonic_time(nanosecond) - T0) / 1.0e9 < Secs of
        true ->
            Rec ! {ping, erlang:monotonic_time(nanosecond)},
            timer:sleep(5),
            sparse(Rec, T0, Secs, Sent + 1);
        false -> Sent
    end.

recorder(Owner, Acc) ->
    receive
        {ping, Sent} ->
            Us = (erlang:monotonic_time(nanosecond) - Sent) / 1000,
            recorder(Owner, [Us | Acc]);
        {count, From} -> From ! {count, length(Acc)}, recorder(Owner, Acc);
        {take, From} -> From ! {taken, Acc}, recorder(Owner, [])
    end.

wait_count(Rec, N) ->
    Rec ! {count, self()},
    receive {count, C} when C >= N -> ok;
            {count, _} -> timer:sleep(1), wait_count(Rec, N)
    end.

take(Rec) ->
    Rec ! {take, self()},
    receive {taken, L} -> L end.

cpu_s() ->
    {ok, Stat} = file:read_file("/proc/self/stat"),
    %% Fields after the command name (which is in parentheses): utime is the 14th field
    %% overall, stime the 15th; clock ticks of 1/100 s.
    [_, Rest] = binary:split(Stat, <<") ">>),
    Fields = binary:split(Rest, <<" ">>, [global]),
    U = binary_to_integer(lists:nth(12, Fields)),
    S = binary_to_integer(lists:nth(13, Fields)),
    (U + S) / 100.

%% ---- ask benchmark (actorium-bench ask) ---------------------------------------------------------
%%
%%   erl +S T:T -noshell -pa peers/erlang/ebin -run actorium_bench ask <n>
%%
%% A gen_server answers X with X + 1. It is called N times in a row with gen_server:call from
%% this process (Erlang has no outside threads: the caller is a process of the same VM), each
%% round trip timed; then N times by a client gen_server from inside its handle_call. Prints one
%% `ASK ...` line (same fields as actorium-bench's `ask-exec`) and halts.

ask([NS]) ->
    N = list_to_integer(NS),
    {ok, Srv} = gen_server:start(?MODULE, server, []),
    {ok, Client} = gen_server:start(?MODULE, {client, Srv}, []),
    lists:foreach(fun(X) -> X1 = X + 1, X1 = gen_server:call(Srv, X, infinity) end,
                  lists:seq(0, 999)),
    T0 = erlang:monotonic_time(nanosecond),
    {Sum, Lat} = ask_loop(Srv, 0, N, 0, []),
    Outside = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    Sum = N * (N + 1) div 2,
    Sorted = lists:sort(Lat),
    Len = length(Sorted),
    Med = lists:nth(Len div 2 + 1, Sorted),
    P99 = lists:nth((Len - 1) * 99 div 100 + 1, Sorted),
    T1 = erlang:monotonic_time(nanosecond),
    Sum = gen_server:call(Client, {run, N}, infinity),
    Inside = (erlang:monotonic_time(nanosecond) - T1) / 1.0e9,
    io:format("ASK med_us=~.2f p99_us=~.2f outside_s=~.4f inside_s=~.4f inside_us=~.3f checksum=~B~n",
              [Med, P99, Outside, Inside, Inside / N * 1.0e6, Sum]),
    erlang:halt(0).

ask_loop(_Srv, N, N, Sum, Lat) -> {Sum, Lat};
ask_loop(Srv, X, N, Sum, Lat) ->
    T = erlang:monotonic_time(nanosecond),
    Y = gen_server:call(Srv, X, infinity),
    Us = (erlang:monotonic_time(nanosecond) - T) / 1000,
    ask_loop(Srv, X + 1, N, Sum + Y, [Us | Lat]).

init(server) -> {ok, server};
init({client, Srv}) -> {ok, {client, Srv}}.

handle_call(X, _From, server) when is_integer(X) -> {reply, X + 1, server};
handle_call({run, N}, _From, {client, Srv} = St) ->
    {reply, client_loop(Srv, 0, N, 0), St}.

handle_cast(_, St) -> {noreply, St}.

client_loop(_Srv, N, N, Sum) -> Sum;
client_loop(Srv, X, N, Sum) -> client_loop(Srv, X + 1, N, Sum + gen_server:call(Srv, X, infinity)).

%% ---- scale measurement (actorium-bench scale) ---------------------------------------------------
%%
%%   erl +S T:T +P <n + 4096> -noshell -pa peers/erlang/ebin -run actorium_bench scale <n>
%%
%% Same protocol as actorium-bench's `scale-exec`. The resident set (VmRSS) is read first (after
%% one warm-up read, so that nothing is loaded or grown between the real read and the clock; the
%% VM and its +P-sized process table are already up, unlike the Rust systems' and CAF's
%% baselines); the clock starts right after it. Then this process makes the completion latch (an
%% `atomics` array: remaining, sum), spawns N scale workers (scale_actor: fork-join-creation's
%% work) and keeps their pids in a list (spawn_s, then VmRSS again); then it sends each one an
%% integer, in the list's order; each adds 1 to the sum, decrements the remaining count and ends,
%% and the one that brings it to 0 sends this process the single `{scale_done, Sum}` (msg_s; the
%% checksum, N, as counted in the atomics). The peak is VmHWM, read as soon as that message is
%% in. Prints one `SCALE ...` line and halts.

scale([NS]) ->
    N = list_to_integer(NS),
    N > 0 orelse begin
                     io:format(standard_error, "scale: n must be positive~n", []),
                     erlang:halt(1)
                 end,
    Main = self(),
    _ = proc_status_kib(<<"VmRSS:">>),
    Base = proc_status_kib(<<"VmRSS:">>),
    T0 = now_ns(),
    Latch = atomics:new(2, []),
    atomics:put(Latch, 1, N),
    Pids = scale_spawn(N, Main, Latch, []),
    SpawnS = seconds_since(T0),
    Spawned = proc_status_kib(<<"VmRSS:">>),
    T1 = now_ns(),
    scale_send(Pids, 0),
    Sum = receive {scale_done, S} -> S end,
    MsgS = seconds_since(T1),
    Peak = proc_status_kib(<<"VmHWM:">>),
    case Sum of
        N -> ok;
        _ ->
            io:format(standard_error, "checksum: ~B actors counted, expected ~B~n", [Sum, N]),
            erlang:halt(1)
    end,
    io:format("SCALE n=~B spawn_s=~.4f msg_s=~.4f base_kib=~B spawned_kib=~B peak_kib=~B checksum=~B~n",
              [N, SpawnS, MsgS, Base, Spawned, Peak, Sum]),
    erlang:halt(0).

%% Spawns N workers; returns their pids, last spawned first (not reversed: no second copy).
scale_spawn(0, _Main, _Latch, Acc) -> Acc;
scale_spawn(K, Main, Latch, Acc) ->
    scale_spawn(K - 1, Main, Latch, [spawn(fun() -> scale_actor(Main, Latch) end) | Acc]).

scale_send([], _I) -> ok;
scale_send([P | Ps], I) ->
    P ! I,
    scale_send(Ps, I + 1).

%% A scale worker: one integer, fork-join-creation's work on it, then the latch (atomics index 1:
%% remaining, 2: sum); the last one to finish tells Main.
scale_actor(Main, Latch) ->
    receive
        I when is_integer(I) ->
            X = (0 * 31 + I) rem ?FJ_MOD,
            atomics:add(Latch, 2, 1),
            case atomics:sub_get(Latch, 1, 1) of
                0 -> Main ! {scale_done, atomics:get(Latch, 2)};
                _ -> ok
            end,
            X % the process's result, so that the work is not dropped as dead code
    end.

%% A field of /proc/self/status (`VmRSS:`, `VmHWM:`) in KiB; 0 if absent.
proc_status_kib(Key) ->
    {ok, Status} = file:read_file("/proc/self/status"),
    Lines = binary:split(Status, <<"\n">>, [global]),
    case [L || L <- Lines, binary:longest_common_prefix([L, Key]) =:= byte_size(Key)] of
        [Line | _] ->
            Rest = binary:part(Line, byte_size(Key), byte_size(Line) - byte_size(Key)),
            [Num | _] = binary:split(string:trim(Rest), <<" ">>),
            binary_to_integer(Num);
        [] -> 0
    end.

%% ---- dictionary (workers, msgs, write): Savina's concurrent dictionary ----------------------
dictionary(P) ->
    Workers = param(P, "workers"),
    Msgs = param(P, "msgs"),
    Write = param(P, "write"),
    Workers > 0 orelse fail("workers must be > 0", []),
    (Write >= 1 andalso Write =< 100) orelse fail("write is a percentage, 1 to 100", []),
    T0 = now_ns(),
    Main = self(),
    Dict = spawn(fun() -> dict_loop(#{}) end),
    Ws = [spawn(fun() -> dict_worker_init(Dict, Id, Msgs, Write, Main) end)
          || Id <- lists:seq(0, Workers - 1)],
    [W ! start || W <- Ws],
    Total = collect(Workers, 0),
    Secs = seconds_since(T0),
    Dict ! stop,
    {Secs, Total}.

dict_loop(Map) ->
    receive
        {put, Key, Value, From} ->
            From ! {reply, 0},
            dict_loop(Map#{Key => Value});
        {get, Key, From} ->
            From ! {reply, maps:get(Key, Map, 0)},
            dict_loop(Map);
        stop ->
            ok
    end.

dict_worker_init(Dict, Id, Msgs, Write, Main) ->
    receive
        start ->
            Last = dict_request(Dict, Id, Msgs, Write, 0, 0),
            dict_worker(Dict, Id, Msgs, Write, 1, Last, 0, Main)
    end.

%% Sends the I-th request; returns the index of the worker's last write. `Write` percent are
%% writes (the first one included), the others read the key of the last write.
dict_request(Dict, Id, Msgs, Write, I, Last) ->
    case I * Write rem 100 < Write of
        true ->
            Dict ! {put, Id * Msgs + I, I + 1, self()},
            I;
        false ->
            Dict ! {get, Id * Msgs + Last, self()},
            Last
    end.

dict_worker(Dict, Id, Msgs, Write, Sent, Last, Sum, Main) ->
    receive
        {reply, V} ->
            Sum1 = Sum + V,
            if
                Sent < Msgs ->
                    Last1 = dict_request(Dict, Id, Msgs, Write, Sent, Last),
                    dict_worker(Dict, Id, Msgs, Write, Sent + 1, Last1, Sum1, Main);
                true ->
                    Main ! {done, Sum1}
            end
    end.

%% ---- banking (accounts, transactions): Savina's bank transaction ---------------------------
banking(P) ->
    N = param(P, "accounts"),
    Transactions = param(P, "transactions"),
    N >= 2 orelse fail("banking needs at least 2 accounts", []),
    T0 = now_ns(),
    Main = self(),
    Teller = spawn(fun() -> teller_init(Main, N, Transactions) end),
    Accounts = list_to_tuple(
        [spawn(fun() -> account_init(I, Teller) end) || I <- lists:seq(0, N - 1)]),
    [A ! {accounts, Accounts} || A <- tuple_to_list(Accounts)],
    Teller ! {start, Accounts},
    Total = collect(1, 0),
    Secs = seconds_since(T0),
    [A ! stop || A <- tuple_to_list(Accounts)],
    {Secs, Total}.

account_init(I, Teller) ->
    receive
        {accounts, Accounts} -> account_loop(I, 1000000000, Accounts, Teller)
    end.

account_loop(I, Balance, Accounts, Teller) ->
    receive
        {transfer, To, Amount} ->
            element(To + 1, Accounts) ! {credit, I, Amount},
            account_loop(I, Balance - Amount, Accounts, Teller);
        {credit, From, Amount} ->
            element(From + 1, Accounts) ! credited,
            account_loop(I, Balance + Amount, Accounts, Teller);
        credited ->
            Teller ! completed,
            account_loop(I, Balance, Accounts, Teller);
        report ->
            Teller ! {balance, I, Balance},
            account_loop(I, Balance, Accounts, Teller);
        stop ->
            ok
    end.

teller_init(Main, N, Transactions) ->
    receive
        {start, Accounts} ->
            %% The same arithmetic sequence as every other implementation (BENCHMARKS.md).
            lists:foreach(
              fun(T) ->
                      From = T * 7919 rem N,
                      To = (From + 1 + T * 104729 rem (N - 1)) rem N,
                      element(From + 1, Accounts) ! {transfer, To, T rem 100 + 1}
              end,
              lists:seq(0, Transactions - 1)),
            teller_wait(Transactions),
            [A ! report || A <- tuple_to_list(Accounts)],
            Main ! {done, teller_sum(N, 0)}
    end.

teller_wait(0) -> ok;
teller_wait(K) ->
    receive completed -> teller_wait(K - 1) end.

teller_sum(0, Sum) -> Sum;
teller_sum(K, Sum) ->
    receive
        {balance, I, B} -> teller_sum(K - 1, (Sum + (I + 1) * B) band 16#FFFFFFFFFFFFFFFF)
    end.

%% ---- logistic-map (series, terms): Savina's logistic map series -----------------------------
-define(LOGMAP_M, 1000003).

logmap_next(S, X) -> (3 + S) rem ?LOGMAP_M * X rem ?LOGMAP_M * (?LOGMAP_M - X) rem ?LOGMAP_M.

logistic_map(P) ->
    N = param(P, "series"),
    Terms = param(P, "terms"),
    N > 0 orelse fail("series must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Master = spawn(fun() -> logmaster_init(Main, N, Terms) end),
    Series = [begin
                  Computer = spawn(fun() -> rate_computer(I) end),
                  spawn(fun() -> series_loop(I rem ?LOGMAP_M + 1, Computer, Master) end)
              end || I <- lists:seq(0, N - 1)],
    Master ! {start, Series},
    Total = collect(1, 0),
    Secs = seconds_since(T0),
    [S ! stop || S <- Series],
    {Secs, Total}.

rate_computer(I) ->
    receive
        {compute, X, From} ->
            From ! {computed, logmap_next(I, X)},
            rate_computer(I);
        stop ->
            ok
    end.

series_loop(Term, Computer, Master) ->
    receive
        next_term ->
            Computer ! {compute, Term, self()},
            series_loop(Term, Computer, Master);
        {computed, X} ->
            Master ! {term_done, X},
            series_loop(X, Computer, Master);
        stop ->
            Computer ! stop
    end.

logmaster_init(Main, N, Terms) ->
    receive
        {start, Series} when Terms =:= 0 ->
            Main ! {done, lists:sum([I rem ?LOGMAP_M + 1 || I <- lists:seq(0, N - 1)])},
            Series;
        {start, Series} ->
            logmaster_rounds(Main, Series, N, Terms, 0)
    end.

logmaster_rounds(Main, Series, N, Terms, Step) ->
    [S ! next_term || S <- Series],
    Sum = logmaster_collect(N, 0),
    case Step + 1 of
        Terms -> Main ! {done, Sum};
        Next -> logmaster_rounds(Main, Series, N, Terms, Next)
    end.

logmaster_collect(0, Sum) -> Sum;
logmaster_collect(K, Sum) ->
    receive {term_done, X} -> logmaster_collect(K - 1, Sum + X) end.

%% ---- busy(X, N): the unit of work of bounded-buffer, sleeping-barber, cigarette-smokers ------
%% N steps of the Park-Miller generator Y <- 48271 Y mod (2^31 - 1) from Y = X mod (2^31 - 2) + 1;
%% every value stays below 2^47 (a small integer on 64-bit BEAM).
-define(BUSY_M, 2147483647).
-define(MASK64, 16#FFFFFFFFFFFFFFFF).

busy(X, N) -> busy_loop(X rem (?BUSY_M - 1) + 1, N).

busy_loop(Y, 0) -> Y;
busy_loop(Y, N) -> busy_loop(Y * 48271 rem ?BUSY_M, N - 1).

%% ---- bounded-buffer (producers, consumers, items, buffer, cost): Savina's producer-consumer --
%%
%% The manager's state: the consumers with nothing to do (oldest first), the buffered items
%% (oldest first) and the items that found the buffer full with their producers (in arrival
%% order), each a queue with its length where the length is compared.
-record(bb, {producers, consumers, capacity, available, n_available = 0,
             buffer, n_buffer = 0, waiting, producers_done = 0}).

bounded_buffer(P) ->
    NP = param(P, "producers"),
    NC = param(P, "consumers"),
    Items = param(P, "items"),
    Capacity = param(P, "buffer"),
    Cost = param(P, "cost"),
    NP > 0 orelse fail("producers must be > 0", []),
    NC > 0 orelse fail("consumers must be > 0", []),
    Capacity > 0 orelse fail("buffer must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Manager = spawn(fun() -> bb_manager_init(Capacity) end),
    Producers = list_to_tuple(
        [spawn(fun() -> bb_producer(Manager, Idx, Items, Cost, 0) end)
         || Idx <- lists:seq(0, NP - 1)]),
    Consumers = list_to_tuple(
        [spawn(fun() -> bb_consumer(Manager, Main, Idx, Cost, 0) end)
         || Idx <- lists:seq(0, NC - 1)]),
    Manager ! {start, Producers, Consumers},
    Total = collect(NC, 0) band ?MASK64,
    {seconds_since(T0), Total}.

bb_manager_init(Capacity) ->
    receive
        {start, Producers, Consumers} ->
            [Pr ! produce || Pr <- tuple_to_list(Producers)],
            NC = tuple_size(Consumers),
            %% Every consumer available, in index order.
            bb_manager(#bb{producers = Producers, consumers = Consumers, capacity = Capacity,
                           available = queue:from_list(lists:seq(0, NC - 1)), n_available = NC,
                           buffer = queue:new(), waiting = queue:new()})
    end.

bb_manager(S) ->
    receive
        {item, X, Pr} ->
            if
                S#bb.n_available > 0 ->
                    {{value, C}, Avail} = queue:out(S#bb.available),
                    element(C + 1, S#bb.consumers) ! {consume, X},
                    element(Pr + 1, S#bb.producers) ! produce,
                    bb_manager(S#bb{available = Avail, n_available = S#bb.n_available - 1});
                S#bb.n_buffer < S#bb.capacity ->
                    element(Pr + 1, S#bb.producers) ! produce,
                    bb_manager(S#bb{buffer = queue:in(X, S#bb.buffer),
                                    n_buffer = S#bb.n_buffer + 1});
                true ->
                    %% Its producer is not asked yet.
                    bb_manager(S#bb{waiting = queue:in({X, Pr}, S#bb.waiting)})
            end;
        {available, C} when S#bb.n_buffer > 0 ->
            {{value, X}, Buf} = queue:out(S#bb.buffer),
            element(C + 1, S#bb.consumers) ! {consume, X},
            case queue:out(S#bb.waiting) of
                {{value, {Y, Pr}}, Waiting} ->
                    element(Pr + 1, S#bb.producers) ! produce,
                    bb_manager(S#bb{buffer = queue:in(Y, Buf), waiting = Waiting});
                {empty, _} ->
                    bb_manager(S#bb{buffer = Buf, n_buffer = S#bb.n_buffer - 1})
            end;
        {available, C} ->
            bb_check_end(S#bb{available = queue:in(C, S#bb.available),
                              n_available = S#bb.n_available + 1});
        producer_done ->
            bb_check_end(S#bb{producers_done = S#bb.producers_done + 1})
    end.

%% Every producer done, nothing buffered, every consumer available: the manager asks the
%% consumers for their sums and ends (no producer or consumer sends to it again).
bb_check_end(S) ->
    case S#bb.producers_done =:= tuple_size(S#bb.producers) andalso S#bb.n_buffer =:= 0
        andalso S#bb.n_available =:= tuple_size(S#bb.consumers) of
        true -> [C ! report_sum || C <- tuple_to_list(S#bb.consumers)];
        false -> bb_manager(S)
    end.

bb_producer(Manager, Idx, Items, Cost, Made) ->
    receive
        produce when Made < Items ->
            Manager ! {item, busy(Idx * Items + Made, Cost), Idx},
            bb_producer(Manager, Idx, Items, Cost, Made + 1);
        produce ->
            %% Never asked again: the producer ends.
            Manager ! producer_done
    end.

bb_consumer(Manager, Main, Idx, Cost, Sum) ->
    receive
        {consume, X} ->
            Sum1 = (Sum + busy(X, Cost)) band ?MASK64,
            Manager ! {available, Idx},
            bb_consumer(Manager, Main, Idx, Cost, Sum1);
        report_sum ->
            Main ! {done, Sum}
    end.

%% ---- sleeping-barber (customers, room, arrival, cut): Savina's sleeping barber --------------
%%
%% The room and the barber are told to stop by main after the clock has stopped (the contract
%% never ends them); the factory and every customer end on their own.

sleeping_barber(P) ->
    Customers = param(P, "customers"),
    Chairs = param(P, "room"),
    Arrival = param(P, "arrival"),
    Cut = param(P, "cut"),
    Chairs > 0 orelse fail("room must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Barber = spawn(fun() -> sb_barber_init(Cut) end),
    Room = spawn(fun() -> sb_room(Barber, Chairs, queue:new(), 0, true) end),
    Barber ! {room, Room},
    Factory = spawn(fun() -> sb_factory_init(Main, Room, Customers, Arrival) end),
    Factory ! start,
    Total = collect(1, 0),
    Secs = seconds_since(T0),
    Room ! stop,
    Barber ! stop,
    {Secs, Total}.

sb_factory_init(Main, Room, Customers, Arrival) ->
    receive
        start ->
            %% All arrivals in this one behaviour: each customer's token, its process, its Enter.
            Factory = self(),
            lists:foreach(
              fun(Id) ->
                      Token = busy(Id, Arrival),
                      C = spawn(fun() -> sb_customer(Factory, Id, Token) end),
                      Room ! {enter, C, Token}
              end,
              lists:seq(0, Customers - 1)),
            sb_factory(Main, Room, Customers, 0)
    end.

sb_factory(Main, _Room, 0, Sum) ->
    Main ! {done, Sum};
sb_factory(Main, Room, Left, Sum) ->
    receive
        {returned, C, Token} ->
            %% Savina's retry: the customer goes to the room again.
            Room ! {enter, C, Token},
            sb_factory(Main, Room, Left, Sum);
        {served, _Id, V} ->
            sb_factory(Main, Room, Left - 1, (Sum + V) band ?MASK64)
    end.

sb_customer(Factory, Id, Token) ->
    receive
        full ->
            Factory ! {returned, self(), Token},
            sb_customer(Factory, Id, Token);
        {cut_done, V} ->
            Factory ! {served, Id, V}
    end.

%% Seated: (customer, token) pairs, longest-seated first; N of them.
sb_room(Barber, Chairs, Seated, N, Asleep) ->
    receive
        {enter, C, _Token} when N =:= Chairs ->
            C ! full,
            sb_room(Barber, Chairs, Seated, N, Asleep);
        {enter, C, Token} when Asleep ->
            Barber ! {cut, C, Token},
            sb_room(Barber, Chairs, Seated, N, false);
        {enter, C, Token} ->
            sb_room(Barber, Chairs, queue:in({C, Token}, Seated), N + 1, Asleep);
        next ->
            case queue:out(Seated) of
                {{value, {C, Token}}, Rest} ->
                    Barber ! {cut, C, Token},
                    sb_room(Barber, Chairs, Rest, N - 1, false);
                {empty, _} ->
                    sb_room(Barber, Chairs, Seated, 0, true)
            end;
        stop ->
            ok
    end.

sb_barber_init(Cut) ->
    receive
        {room, Room} -> sb_barber(Room, Cut)
    end.

sb_barber(Room, Cut) ->
    receive
        {cut, C, Token} ->
            C ! {cut_done, busy(Token, Cut)},
            Room ! next,
            sb_barber(Room, Cut);
        stop ->
            ok
    end.

%% ---- cigarette-smokers (smokers, rounds, smoke): Savina's cigarette smokers -----------------

cigarette_smokers(P) ->
    N = param(P, "smokers"),
    Rounds = param(P, "rounds"),
    Smoke = param(P, "smoke"),
    N > 0 orelse fail("smokers must be > 0", []),
    Smoke > 0 orelse fail("smoke must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Arbiter = spawn(fun() -> cig_arbiter_init(Rounds, Smoke) end),
    Smokers = list_to_tuple([spawn(fun() -> cig_smoker(Arbiter, Main, 0) end)
                             || _ <- lists:seq(1, N)]),
    Arbiter ! {start, Smokers},
    Total = collect(N, 0) band ?MASK64,
    {seconds_since(T0), Total}.

cig_arbiter_init(Rounds, Smoke) ->
    receive
        {start, Smokers} -> cig_arbiter(Smokers, Rounds, Smoke, 0)
    end.

%% Round R has not started yet: after `Rounds` rounds every smoker is told to exit and the
%% arbiter ends (no smoker sends it anything more); else round R's smoker gets the ingredients
%% (r * 7919 mod smokers, smoking r * 104729 mod smoke + 10 steps) and the arbiter waits for
%% its `started`.
cig_arbiter(Smokers, Rounds, _Smoke, Rounds) ->
    [S ! exit || S <- tuple_to_list(Smokers)];
cig_arbiter(Smokers, Rounds, Smoke, R) ->
    element(R * 7919 rem tuple_size(Smokers) + 1, Smokers) ! {smoke, R, R * 104729 rem Smoke + 10},
    receive
        started -> cig_arbiter(Smokers, Rounds, Smoke, R + 1)
    end.

cig_smoker(Arbiter, Main, Sum) ->
    receive
        {smoke, R, Time} ->
            Arbiter ! started,
            cig_smoker(Arbiter, Main, (Sum + busy(R, Time)) band ?MASK64);
        exit ->
            Main ! {done, Sum}
    end.

%% ---- pipeline-lanes (items, lanes, cost), pipeline-chain (items, stages, cost) ---------------
%%
%% Main sends every item. pipeline-lanes: a splitter sends item I to lane I rem lanes, a lane
%% sends busy(I, cost) to the merger, the merger forwards it to the sink. pipeline-chain: stage
%% S sends busy(X + S, cost) to the next stage, the last one to the sink. The sink adds what
%% arrives and reports the sum after `items`. The other processes are told to stop after the
%% clock.

pipeline_lanes(P) ->
    Items = param(P, "items"),
    Lanes = param(P, "lanes"),
    Cost = param(P, "cost"),
    Items > 0 orelse fail("items must be > 0", []),
    Lanes > 0 orelse fail("lanes must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Sink = spawn(fun() -> pipe_sink(Main, Items, 0, 0) end),
    Merger = spawn(fun() -> pipe_forward(Sink) end),
    LaneTuple = list_to_tuple([spawn(fun() -> pipe_lane(Merger, Cost) end)
                               || _ <- lists:seq(1, Lanes)]),
    Splitter = spawn(fun() -> pipe_split(LaneTuple) end),
    pipe_feed(Splitter, 0, Items),
    Sum = collect(1, 0),
    Seconds = seconds_since(T0),
    [Pid ! stop || Pid <- [Splitter, Merger | tuple_to_list(LaneTuple)]],
    {Seconds, Sum}.

pipeline_chain(P) ->
    Items = param(P, "items"),
    Stages = param(P, "stages"),
    Cost = param(P, "cost"),
    Items > 0 orelse fail("items must be > 0", []),
    Stages > 0 orelse fail("stages must be > 0", []),
    T0 = now_ns(),
    Main = self(),
    Sink = spawn(fun() -> pipe_sink(Main, Items, 0, 0) end),
    Chain = pipe_chain(Stages - 1, Sink, Cost, []),
    pipe_feed(hd(Chain), 0, Items),
    Sum = collect(1, 0),
    Seconds = seconds_since(T0),
    [Pid ! stop || Pid <- Chain],
    {Seconds, Sum}.

%% Spawns stages Idx, Idx-1, ..., 0 (each with its successor); returns them, stage 0 first.
pipe_chain(-1, _Next, _Cost, Acc) -> Acc;
pipe_chain(Idx, Next, Cost, Acc) ->
    S = spawn(fun() -> pipe_stage(Next, Idx, Cost) end),
    pipe_chain(Idx - 1, S, Cost, [S | Acc]).

pipe_feed(_To, Items, Items) -> ok;
pipe_feed(To, I, Items) ->
    To ! {item, I},
    pipe_feed(To, I + 1, Items).

pipe_sink(Main, Items, Got, Sum) ->
    receive
        {item, X} ->
            Sum1 = (Sum + X) band ?MASK64,
            case Got + 1 of
                Items -> Main ! {done, Sum1};
                Got1 -> pipe_sink(Main, Items, Got1, Sum1)
            end
    end.

pipe_split(Lanes) ->
    receive
        {item, I} ->
            element(I rem tuple_size(Lanes) + 1, Lanes) ! {item, I},
            pipe_split(Lanes);
        stop ->
            ok
    end.

pipe_lane(Merger, Cost) ->
    receive
        {item, I} ->
            Merger ! {item, busy(I, Cost)},
            pipe_lane(Merger, Cost);
        stop ->
            ok
    end.

pipe_forward(To) ->
    receive
        {item, _} = Msg ->
            To ! Msg,
            pipe_forward(To);
        stop ->
            ok
    end.

pipe_stage(Next, Idx, Cost) ->
    receive
        {item, X} ->
            Next ! {item, busy(X + Idx, Cost)},
            pipe_stage(Next, Idx, Cost);
        stop ->
            ok
    end.
