%% The remote benchmark's Erlang peer: Erlang distribution between two nodes on 127.0.0.1
%% (what `actorium-bench remote` runs when `erl` is installed).
%%
%%   erl -name srv@127.0.0.1 -setcookie B -noshell -pa ebin -run actorium_remote server
%%   erl -name cli@127.0.0.1 -setcookie B -noshell -pa ebin \
%%       -run actorium_remote client srv@127.0.0.1 N Tells Sparse
%%
%% The server registers `echo` (a gen_server: call {ping, I} -> I + 1) and `counter` (a plain
%% process that counts and sums {item, A, B} messages; {take, From} replies and resets),
%% prints `ready` and waits. The client measures, against the server: N sequential
%% gen_server:call round trips (p50, p99), Tells messages sent with `!` then one take (every
%% one counted and summed: the checksum), and Sparse calls one per 5 ms (p50); prints
%% `RESULT call_p50_us=.. call_p99_us=.. tell_mps=.. sparse_p50_us=..` and halts. Around the
%% calls and the tells it prints `mark` lines and waits for a line on stdin each time: the
%% benchmark reads both processes' CPU time there.
-module(actorium_remote).
-export([server/0, client/1, init/1, handle_call/3, handle_cast/2]).
-behaviour(gen_server).

server() ->
    {ok, _} = gen_server:start({local, echo}, ?MODULE, [], []),
    register(counter, spawn(fun() -> counter(0, 0) end)),
    io:format("ready~n"),
    receive stop -> ok end.

init([]) -> {ok, nil}.
handle_call({ping, I}, _From, S) -> {reply, I + 1, S}.
handle_cast(_, S) -> {noreply, S}.

counter(C, S) ->
    receive
        {item, A, B} -> counter(C + 1, S + (A bxor B));
        {take, From} -> From ! {tally, C, S}, counter(0, 0)
    end.

client(Args) ->
    try run(Args)
    catch C:R ->
        io:format(standard_error, "actorium_remote: ~p:~p~n", [C, R]),
        erlang:halt(1)
    end.

run([Srv, NS, TellsS, SparseS]) ->
    Node = list_to_atom(Srv),
    [N, Tells, Sparse] = [list_to_integer(X) || X <- [NS, TellsS, SparseS]],
    pong = net_adm:ping(Node),
    Echo = {echo, Node},
    Counter = {counter, Node},
    mark(),
    Lat = [begin
               T0 = erlang:monotonic_time(nanosecond),
               I1 = gen_server:call(Echo, {ping, I}),
               I1 = I + 1,
               erlang:monotonic_time(nanosecond) - T0
           end || I <- lists:seq(1, N)],
    mark(N),
    mark(),
    T0 = erlang:monotonic_time(nanosecond),
    Sum = send_items(Counter, 0, Tells, 0),
    Counter ! {take, self()},
    receive {tally, Tells, Sum} -> ok after 120000 -> error(the_tally_did_not_match) end,
    TellNs = erlang:monotonic_time(nanosecond) - T0,
    mark(Tells),
    SparseLat = [begin
                     timer:sleep(5),
                     S0 = erlang:monotonic_time(nanosecond),
                     _ = gen_server:call(Echo, {ping, I}),
                     erlang:monotonic_time(nanosecond) - S0
                 end || I <- lists:seq(1, Sparse)],
    io:format("RESULT call_p50_us=~.2f call_p99_us=~.2f tell_mps=~.4f sparse_p50_us=~.2f~n",
              [pct(Lat, 50), pct(Lat, 99), Tells / (TellNs / 1.0e9) / 1.0e6, pct(SparseLat, 50)]),
    erlang:halt(0).

%% Tells the benchmark a phase begins (`mark`) or ends (`mark Count`, its round trips or
%% messages) and waits for a line on stdin: the benchmark reads both processes' CPU time
%% meanwhile.
mark() -> mark_line("mark~n", []).
mark(Count) -> mark_line("mark ~b~n", [Count]).
mark_line(Format, Args) ->
    io:format(Format, Args),
    _ = io:get_line(""),
    ok.

send_items(_, I, I, Sum) -> Sum;
send_items(Counter, I, Tells, Sum) ->
    Counter ! {item, I, 2 * I + 1},
    send_items(Counter, I + 1, Tells, Sum + (I bxor (2 * I + 1))).

pct(L, P) ->
    S = lists:sort(L),
    K = min(length(S), max(1, (length(S) * P) div 100 + 1)),
    lists:nth(K, S) / 1000.0.
