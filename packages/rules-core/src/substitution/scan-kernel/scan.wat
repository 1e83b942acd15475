;; The substituter's hot loop in WebAssembly: one DFA transition per byte (see scan-kernel.ts for
;; the memory layout and the JavaScript side, and substituter.ts for the contract this loop keeps).
;; Written by hand: `npm run build:scan-kernel -w @rampart/rules-core` turns it into scan-wasm.ts.
;;
;; Why WebAssembly: V8 keeps a bounds check on every typed-array read of the JavaScript loop; here
;; memory accesses need none, and the same loop ran about 1.5x faster (rules-core README).
;;
;; All positions are indices into the substituter's buffer (`buf` is the address of index 0, so
;; buf + i is the byte at index i; only the copied window of it may be read). Tables are given by
;; address: trans, acts, ruleOf, regOf, idles (i32), classes, factsAfter, bits, inline (u8); so
;; are the registers, the match queue and the results. The layout is scan-kernel.ts's alone.
(module
  (memory (import "kernel" "memory") 1)

  ;; From the idle state at index i (>= 1), the first index where a match may start, or the last
  ;; one before stop, four positions per 32-bit read (the skip tables: LazyDfa.skipTables).
  ;; uniform: every entry of bits is 0 or 0xff, so the facts before a position do not matter.
  (func $skip (param $buf i32) (param $i i32) (param $stop i32) (param $bits i32)
    (param $facts i32) (param $uniform i32) (result i32)
    (local $w i32) (local $b i32) (local $n i32) (local $prev i32)
    (if (local.get $uniform)
      (then
        (block $found
          (loop $words
            (br_if $found (i32.ge_s (i32.add (local.get $i) (i32.const 4)) (local.get $stop)))
            (local.set $w (i32.load (i32.add (local.get $buf) (local.get $i))))
            (br_if $found
              (i32.or
                (i32.or
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.and (local.get $w) (i32.const 0xffff))))
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 8)) (i32.const 0xffff)))))
                (i32.or
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.shr_u (local.get $w) (i32.const 16))))
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.or
                      (i32.shr_u (local.get $w) (i32.const 24))
                      (i32.shl
                        (i32.load8_u (i32.add (i32.add (local.get $buf) (local.get $i)) (i32.const 4)))
                        (i32.const 8))))))))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (br $words)))
        (local.set $b (i32.load8_u (i32.add (local.get $buf) (local.get $i))))
        (block $done
          (loop $bytes
            (br_if $done (i32.ge_s (i32.add (local.get $i) (i32.const 1)) (local.get $stop)))
            (local.set $n (i32.load8_u (i32.add (i32.add (local.get $buf) (local.get $i)) (i32.const 1))))
            (br_if $done
              (i32.load8_u (i32.add (local.get $bits)
                (i32.or (local.get $b) (i32.shl (local.get $n) (i32.const 8))))))
            (local.set $b (local.get $n))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $bytes)))
        (return (local.get $i))))
    ;; The facts at each position come from the byte before it: bit `facts[prev]` of the entry.
    (local.set $prev (i32.load8_u (i32.sub (i32.add (local.get $buf) (local.get $i)) (i32.const 1))))
    (block $found
      (loop $words
        (br_if $found (i32.ge_s (i32.add (local.get $i) (i32.const 4)) (local.get $stop)))
        (local.set $w (i32.load (i32.add (local.get $buf) (local.get $i))))
        (br_if $found
          (i32.and (i32.const 1)
            (i32.or
              (i32.or
                (i32.shr_u
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.and (local.get $w) (i32.const 0xffff))))
                  (i32.load8_u (i32.add (local.get $facts) (local.get $prev))))
                (i32.shr_u
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 8)) (i32.const 0xffff))))
                  (i32.load8_u (i32.add (local.get $facts)
                    (i32.and (local.get $w) (i32.const 0xff))))))
              (i32.or
                (i32.shr_u
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.shr_u (local.get $w) (i32.const 16))))
                  (i32.load8_u (i32.add (local.get $facts)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 8)) (i32.const 0xff)))))
                (i32.shr_u
                  (i32.load8_u (i32.add (local.get $bits)
                    (i32.or
                      (i32.shr_u (local.get $w) (i32.const 24))
                      (i32.shl
                        (i32.load8_u (i32.add (i32.add (local.get $buf) (local.get $i)) (i32.const 4)))
                        (i32.const 8)))))
                  (i32.load8_u (i32.add (local.get $facts)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 16)) (i32.const 0xff)))))))))
        (local.set $prev (i32.shr_u (local.get $w) (i32.const 24)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $words)))
    (local.set $b (i32.load8_u (i32.add (local.get $buf) (local.get $i))))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_s (i32.add (local.get $i) (i32.const 1)) (local.get $stop)))
        (local.set $n (i32.load8_u (i32.add (i32.add (local.get $buf) (local.get $i)) (i32.const 1))))
        (br_if $done
          (i32.and (i32.const 1)
            (i32.shr_u
              (i32.load8_u (i32.add (local.get $bits)
                (i32.or (local.get $b) (i32.shl (local.get $n) (i32.const 8)))))
              (i32.load8_u (i32.add (local.get $facts) (local.get $prev))))))
        (local.set $prev (local.get $b))
        (local.set $b (local.get $n))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (local.get $i))

;; Loop templates (code 4): entries (kind, a, b) at e. Kind 0 is the literal at [a, b); kind 1
  ;; a slice of the match [start, end) (addresses), from a to b, each >= 0 from start, or
  ;; (-1 - n) n back from end. $len is the entry's length (0 when to <= from), $src where it is.
  (func $pos (param $v i32) (param $start i32) (param $end i32) (result i32)
    (select
      (i32.add (local.get $start) (local.get $v))
      (i32.add (i32.add (local.get $end) (i32.const 1)) (local.get $v))
      (i32.ge_s (local.get $v) (i32.const 0))))
  (func $src (param $e i32) (param $start i32) (param $end i32) (result i32)
    (if (result i32) (i32.eqz (i32.load (local.get $e)))
      (then (i32.load offset=4 (local.get $e)))
      (else (call $pos (i32.load offset=4 (local.get $e)) (local.get $start) (local.get $end)))))
  (func $len (param $e i32) (param $start i32) (param $end i32) (result i32)
    (local $from i32) (local $to i32)
    (local.set $from (call $src (local.get $e) (local.get $start) (local.get $end)))
    (local.set $to
      (if (result i32) (i32.eqz (i32.load (local.get $e)))
        (then (i32.load offset=8 (local.get $e)))
        (else (call $pos (i32.load offset=8 (local.get $e)) (local.get $start) (local.get $end)))))
    (select (i32.sub (local.get $to) (local.get $from)) (i32.const 0)
      (i32.gt_s (local.get $to) (local.get $from))))

  ;; The scan (Substituter.scan states its contract): from index i while i < stop, one transition
  ;; per byte; returns the index of the first byte not consumed (a transition that needs the slow
  ;; path, or stop).
  ;; end: where the bytes available end (stop after a restart is min(end, restart + maxRel)).
  ;; skipMode: 0 no skipping, 1 skip tables that depend on the facts, 2 uniform ones.
  (func (export "scan")
    (param $i i32) (param $stop i32) (param $end i32) (param $s i32) (param $maxRel i32)
    (param $buf i32) (param $classes i32) (param $trans i32) (param $acts i32)
    (param $facts i32) (param $idles i32) (param $ruleOf i32) (param $regOf i32)
    (param $stride i32) (param $inline i32) (param $regs i32) (param $bits i32)
    (param $skipMode i32) (param $flags i32) (param $moves i32) (param $moveCount i32)
    (param $queue i32) (param $queueInts i32) (param $out i32)
    (param $emitPos i32) (param $lo i32) (param $lits i32) (param $counts i32)
    (param $touched i32) (param $outAt i32) (param $outEnd i32) (param $templates i32)
    (result i32)
    (local $at i32) (local $t i32) (local $target i32) (local $matchEnd i32) (local $id i32)
    (local $reg i32) (local $rule i32) (local $matchStart i32) (local $restart i32)
    (local $matchTarget i32) (local $matchAt i32) (local $queued i32) (local $lastRestart i32)
    (local $near i32) (local $j i32) (local $prev i32) (local $b i32)
    (local $move i32) (local $n i32) (local $k i32) (local $o i32)
    (local $code i32) (local $gap i32) (local $from i32) (local $piece i32) (local $c i32)
    (local $touchedCount i32) (local $tpl i32) (local $e i32) (local $len i32)
    (local.set $matchTarget (i32.const -1))
    (local.set $lastRestart (i32.const -1))
    (block $exit
      (loop $next
        (br_if $exit (i32.ge_s (local.get $i) (local.get $stop)))
        (local.set $at
          (i32.add (local.get $s)
            (i32.load8_u (i32.add (local.get $classes)
              (i32.load8_u (i32.add (local.get $buf) (local.get $i)))))))
        (local.set $t
          (i32.load (i32.add (local.get $trans) (i32.shl (local.get $at) (i32.const 2)))))
        (block $advance
          ;; Most transitions are plain: a conditional branch predicts them better than the table.
          (br_if $advance (i32.eqz (i32.and (local.get $t) (i32.const 7))))
          (block $settle
            (block $finalOnly
              (block $finalMatch
                (block $toIdle
                  (block $pushOnly
                    (block $matchOnly
                      (block $pushFirst
                        (block $slow
                          ;; codes: 0 plain, 1 SLOW, 2 MATCH_ONLY, 3 PUSH_ONLY, 4 TO_IDLE,
                          ;; 5 FINAL_MATCH, 6 FINAL_ONLY, 7 PUSH_FIRST (lazy-dfa.ts)
                          (br_table $advance $slow $matchOnly $pushOnly $toIdle $finalMatch
                            $finalOnly $pushFirst
                            (i32.and (local.get $t) (i32.const 7))))
                        ;; SLOW: a general register move (acts holds its id) into a state that
                        ;; neither reports a match nor is final is applied here, as the slow
                        ;; path's step would; anything else (not built, a push with a match,
                        ;; a final target, a move not copied in) is left to the slow path.
                        (br_if $exit (i32.lt_s (local.get $t) (i32.const 0)))
                        (local.set $move
                          (i32.load (i32.add (local.get $acts) (i32.shl (local.get $at) (i32.const 2)))))
                        (br_if $exit (i32.lt_u (local.get $move) (i32.const 2)))
                        (br_if $exit (i32.ge_u (local.get $move) (local.get $moveCount)))
                        (local.set $id
                          (i32.div_u (i32.shr_s (local.get $t) (i32.const 3)) (local.get $stride)))
                        ;; flags: HAS_MATCH 1, FINAL 2
                        (br_if $exit
                          (i32.and (i32.load8_u (i32.add (local.get $flags) (local.get $id)))
                            (i32.const 3)))
                        ;; moves[move] is the address of [n, origin 0, ..., origin n-1]: register
                        ;; k takes register origin k's value, or the position when it is -1, in
                        ;; order and in place (as step does).
                        (local.set $move
                          (i32.load (i32.add (local.get $moves) (i32.shl (local.get $move) (i32.const 2)))))
                        (local.set $n (i32.load (local.get $move)))
                        (local.set $k (i32.const 0))
                        (block $moved
                          (loop $registers
                            (br_if $moved (i32.ge_u (local.get $k) (local.get $n)))
                            (local.set $o
                              (i32.load offset=4
                                (i32.add (local.get $move) (i32.shl (local.get $k) (i32.const 2)))))
                            (if (i32.ge_s (local.get $o) (i32.const 0))
                              (then
                                (local.set $o
                                  (i32.load (i32.add (local.get $regs) (i32.shl (local.get $o) (i32.const 2))))))
                              (else (local.set $o (local.get $i))))
                            (i32.store (i32.add (local.get $regs) (i32.shl (local.get $k) (i32.const 2)))
                              (local.get $o))
                            (local.set $k (i32.add (local.get $k) (i32.const 1)))
                            (br $registers)))
                        (br $advance))
                      ;; A partial match starts here and is the only live one.
                      (i32.store (local.get $regs) (local.get $i))
                      (br $advance))
                    ;; A match that moves no register: only the last one seen matters.
                    (local.set $matchTarget (i32.shr_s (local.get $t) (i32.const 3)))
                    (local.set $matchAt (local.get $i))
                    (br $advance))
                  ;; A partial match starts here, after older live ones: acts names the register.
                  (i32.store
                    (i32.add (local.get $regs)
                      (i32.shl
                        (i32.load (i32.add (local.get $acts) (i32.shl (local.get $at) (i32.const 2))))
                        (i32.const 2)))
                    (local.get $i))
                  (br $advance))
                ;; Back in an idle state: skip every position where no match can start.
                (br_if $advance (i32.eqz (local.get $skipMode)))
                (local.set $s (i32.shr_s (local.get $t) (i32.const 3)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (local.set $j (local.get $i))
                (local.set $prev
                  (i32.load8_u (i32.sub (i32.add (local.get $buf) (local.get $i)) (i32.const 1))))
                ;; Short stretches here (a call costs more than a few positions), long ones in $skip.
                (local.set $near (i32.sub (local.get $stop) (i32.const 1)))
                (if (i32.lt_s (i32.add (local.get $i) (i32.const 8)) (local.get $near))
                  (then (local.set $near (i32.add (local.get $i) (i32.const 8)))))
                (block $stopped
                  (loop $short
                    (br_if $stopped (i32.ge_s (local.get $j) (local.get $near)))
                    (local.set $b (i32.load8_u (i32.add (local.get $buf) (local.get $j))))
                    (br_if $stopped
                      (i32.and (i32.const 1)
                        (i32.shr_u
                          (i32.load8_u (i32.add (local.get $bits)
                            (i32.or (local.get $b)
                              (i32.shl
                                (i32.load8_u
                                  (i32.add (i32.add (local.get $buf) (local.get $j)) (i32.const 1)))
                                (i32.const 8)))))
                          (i32.load8_u (i32.add (local.get $facts) (local.get $prev))))))
                    (local.set $prev (local.get $b))
                    (local.set $j (i32.add (local.get $j) (i32.const 1)))
                    (br $short)))
                (if (i32.and
                      (i32.eq (local.get $j) (local.get $near))
                      (i32.lt_s (i32.add (local.get $j) (i32.const 1)) (local.get $stop)))
                  (then
                    (local.set $j
                      (call $skip (local.get $buf) (local.get $j) (local.get $stop)
                        (local.get $bits) (local.get $facts)
                        (i32.eq (local.get $skipMode) (i32.const 2))))))
                (if (i32.ne (local.get $j) (local.get $i))
                  (then
                    (local.set $i (local.get $j))
                    (local.set $s
                      (i32.load (i32.add (local.get $idles)
                        (i32.shl
                          (i32.load8_u (i32.add (local.get $facts)
                            (i32.load8_u (i32.sub (i32.add (local.get $buf) (local.get $i))
                              (i32.const 1)))))
                          (i32.const 2)))))))
                (br $next))
              ;; Into a final state with a match of its own: that match is final.
              (local.set $target (i32.shr_s (local.get $t) (i32.const 3)))
              (local.set $matchEnd (local.get $i))
              (br $settle))
            ;; Into a final state without one: the last match seen is final (if it is this call's).
            (br_if $exit (i32.lt_s (local.get $matchTarget) (i32.const 0)))
            (local.set $target (local.get $matchTarget))
            (local.set $matchEnd (local.get $matchAt)))
          ;; Settle the match here when the rule allows it (see Substituter.scan), else leave it to the slow path.
          (local.set $id (i32.div_u (local.get $target) (local.get $stride)))
          (local.set $rule
            (i32.load (i32.add (local.get $ruleOf) (i32.shl (local.get $id) (i32.const 2)))))
          (local.set $reg
            (i32.load (i32.add (local.get $regOf) (i32.shl (local.get $id) (i32.const 2)))))
          (local.set $matchStart (local.get $matchEnd))
          (if (i32.ge_s (local.get $reg) (i32.const 0))
            (then
              (local.set $matchStart
                (i32.load (i32.add (local.get $regs) (i32.shl (local.get $reg) (i32.const 2)))))))
          ;; A non-empty match of a rule whose inline code (see scan-kernel.ts) is not 0, whose
          ;; unemitted bytes before it are in the window, and whose output fits is settled:
          ;; those bytes and the match's output are appended at outAt, the rule's counters
          ;; counted. Code 1: the rule's constant replacement (lits: [from, to) per rule);
          ;; code 2: the match itself; code 3: left to JavaScript, queued as (rule, start, end,
          ;; the output's end before it); code 4: the rule's loop template (templates: its
          ;; address per rule).
          (br_if $exit (i32.eq (local.get $matchStart) (local.get $matchEnd)))
          (local.set $code (i32.load8_u (i32.add (local.get $inline) (local.get $rule))))
          (br_if $exit (i32.eqz (local.get $code)))
          (br_if $exit (i32.lt_s (local.get $emitPos) (local.get $lo)))
          (br_if $exit (i32.lt_s (local.get $matchStart) (local.get $emitPos)))
          (local.set $restart
            (i32.load (i32.add (local.get $idles)
              (i32.shl
                (i32.load8_u (i32.add (local.get $facts)
                  (i32.load8_u (i32.sub (i32.add (local.get $buf) (local.get $matchEnd))
                    (i32.const 1)))))
                (i32.const 2)))))
          (br_if $exit (i32.lt_s (local.get $restart) (i32.const 0)))
          (local.set $gap (i32.sub (local.get $matchStart) (local.get $emitPos)))
          (local.set $piece (i32.const 0))
          (if (i32.eq (local.get $code) (i32.const 1))
            (then
              (local.set $from
                (i32.load (i32.add (local.get $lits) (i32.shl (local.get $rule) (i32.const 3)))))
              (local.set $piece
                (i32.sub
                  (i32.load offset=4
                    (i32.add (local.get $lits) (i32.shl (local.get $rule) (i32.const 3))))
                  (local.get $from)))))
          (if (i32.eq (local.get $code) (i32.const 2))
            (then
              (local.set $from (i32.add (local.get $buf) (local.get $matchStart)))
              (local.set $piece (i32.sub (local.get $matchEnd) (local.get $matchStart)))))
          (if (i32.eq (local.get $code) (i32.const 3))
            (then (br_if $exit (i32.ge_u (i32.add (local.get $queued) (i32.const 4))
              (local.get $queueInts)))))
          (if (i32.eq (local.get $code) (i32.const 4))
            (then
              (local.set $tpl
                (i32.load (i32.add (local.get $templates) (i32.shl (local.get $rule) (i32.const 2)))))
              (br_if $exit (i32.eqz (local.get $tpl)))
              (local.set $n (i32.load (local.get $tpl)))
              (local.set $k (i32.const 0))
              (block $sized
                (loop $size
                  (br_if $sized (i32.ge_u (local.get $k) (local.get $n)))
                  (local.set $piece
                    (i32.add (local.get $piece)
                      (call $len
                        (i32.add (i32.add (local.get $tpl) (i32.const 4)) (i32.shl (local.get $k) (i32.const 2)))
                        (i32.add (local.get $buf) (local.get $matchStart))
                        (i32.add (local.get $buf) (local.get $matchEnd)))))
                  (local.set $k (i32.add (local.get $k) (i32.const 3)))
                  (br $size)))))
          (br_if $exit
            (i32.gt_u
              (i32.add (i32.add (local.get $outAt) (local.get $gap)) (local.get $piece))
              (local.get $outEnd)))
          (memory.copy (local.get $outAt) (i32.add (local.get $buf) (local.get $emitPos))
            (local.get $gap))
          (local.set $outAt (i32.add (local.get $outAt) (local.get $gap)))
          (if (i32.eq (local.get $code) (i32.const 3))
            (then
              (i32.store (i32.add (local.get $queue) (i32.shl (local.get $queued) (i32.const 2)))
                (local.get $rule))
              (i32.store offset=4
                (i32.add (local.get $queue) (i32.shl (local.get $queued) (i32.const 2)))
                (local.get $matchStart))
              (i32.store offset=8
                (i32.add (local.get $queue) (i32.shl (local.get $queued) (i32.const 2)))
                (local.get $matchEnd))
              (i32.store offset=12
                (i32.add (local.get $queue) (i32.shl (local.get $queued) (i32.const 2)))
                (local.get $outAt))
              (local.set $queued (i32.add (local.get $queued) (i32.const 4))))
            (else
              (if (i32.eq (local.get $code) (i32.const 4))
                (then
                  (local.set $k (i32.const 0))
                  (block $written
                    (loop $write
                      (br_if $written (i32.ge_u (local.get $k) (local.get $n)))
                      (local.set $e
                        (i32.add (i32.add (local.get $tpl) (i32.const 4)) (i32.shl (local.get $k) (i32.const 2))))
                      (local.set $len
                        (call $len (local.get $e)
                          (i32.add (local.get $buf) (local.get $matchStart))
                          (i32.add (local.get $buf) (local.get $matchEnd))))
                      (memory.copy (local.get $outAt)
                        (call $src (local.get $e)
                          (i32.add (local.get $buf) (local.get $matchStart))
                          (i32.add (local.get $buf) (local.get $matchEnd)))
                        (local.get $len))
                      (local.set $outAt (i32.add (local.get $outAt) (local.get $len)))
                      (local.set $k (i32.add (local.get $k) (i32.const 3)))
                      (br $write))))
                (else
                  (memory.copy (local.get $outAt) (local.get $from) (local.get $piece))
                  (local.set $outAt (i32.add (local.get $outAt) (local.get $piece)))))))
          ;; counts: [matches, replacements] per rule; touched lists each rule counted first
          ;; in this call (JavaScript adds them to its own and zeroes them after the call).
          (local.set $c (i32.add (local.get $counts) (i32.shl (local.get $rule) (i32.const 3))))
          (if (i32.eqz (i32.load (local.get $c)))
            (then
              (i32.store (i32.add (local.get $touched) (i32.shl (local.get $touchedCount) (i32.const 2)))
                (local.get $rule))
              (local.set $touchedCount (i32.add (local.get $touchedCount) (i32.const 1)))))
          (i32.store (local.get $c) (i32.add (i32.load (local.get $c)) (i32.const 1)))
          (if (i32.ne (local.get $code) (i32.const 2))
            (then
              (i32.store offset=4 (local.get $c)
                (i32.add (i32.load offset=4 (local.get $c)) (i32.const 1)))))
          (local.set $emitPos (local.get $matchEnd))
          (local.set $matchTarget (i32.const -1))
          ;; Nothing is live after a restart: what starts later starts at or after its end.
          (local.set $lastRestart (local.get $matchEnd))
          (local.set $stop (i32.add (local.get $matchEnd) (local.get $maxRel)))
          (if (i32.lt_s (local.get $end) (local.get $stop))
            (then (local.set $stop (local.get $end))))
          (local.set $s (local.get $restart))
          (local.set $i (local.get $matchEnd))
          (br $next))
        ;; A plain transition (and the end of the three simple cases above).
        (local.set $s (i32.shr_s (local.get $t) (i32.const 3)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    ;; Results besides the returned index, eight ints at out (scan-kernel.ts reads them in this
    ;; order): state, matchTarget, matchAt, queued, lastRestart, emitPos, outAt, touchedCount.
    (i32.store (local.get $out) (local.get $s))
    (i32.store offset=4 (local.get $out) (local.get $matchTarget))
    (i32.store offset=8 (local.get $out) (local.get $matchAt))
    (i32.store offset=12 (local.get $out) (local.get $queued))
    (i32.store offset=16 (local.get $out) (local.get $lastRestart))
    (i32.store offset=20 (local.get $out) (local.get $emitPos))
    (i32.store offset=24 (local.get $out) (local.get $outAt))
    (i32.store offset=28 (local.get $out) (local.get $touchedCount))
    (local.get $i))
)
