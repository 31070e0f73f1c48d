// RUN: fa4-opt %s --fa4-synchronize | %python %S/plant-bug.py move-proxy-fence correction corr_epi.full \
// RUN:   | not fa4-sim --batch 1 --seq-q 256 --seq-kv 384 --seeds 4 | FileCheck %s

// The correction warpgroup writes the normalized O tile into shared memory
// with ordinary stores and executes its fence.proxy.async only after the
// arrive on corr_epi.full that hands the tile to the store warp. The fence
// runs before the TMA store reads the tile on almost every schedule, but it
// is not ordered before the release the store warp acquires, so the async
// proxy may read stale bytes: every seed must report it.
// A small kernel (2 heads, D = 64) compiled to the synchronization level;
// the RUN line plants one bug and fa4-sim must catch it.

// CHECK: seed 1: FAIL
// CHECK-NEXT: race on shared memory bytes [{{[0-9]+}}, {{[0-9]+}}] ('o_staging' + {{[0-9]+}}): write by thread {{[0-9]+}} ({{.*}}role correction{{.*}}(vector.store) and read by the TMA store issued by thread 448 {{.*}}(nvgpu.tma.async.store) through the async proxy are not ordered: the writing thread executed no fence.proxy.async between its ordinary stores and the barrier that orders them (its next fence.proxy.async, at {{.*}}, comes after that barrier)
// CHECK: seed 2: FAIL
// CHECK-NEXT: race on shared memory bytes {{.*}} ('o_staging' + {{[0-9]+}}): write by {{.*}}role correction{{.*}} through the async proxy are not ordered: {{.*}}comes after that barrier)
// CHECK: seed 3: FAIL
// CHECK-NEXT: race on shared memory bytes {{.*}} ('o_staging' + {{[0-9]+}}): write by {{.*}}role correction{{.*}} through the async proxy are not ordered: {{.*}}comes after that barrier)
// CHECK: seed 4: FAIL
// CHECK-NEXT: race on shared memory bytes {{.*}} ('o_staging' + {{[0-9]+}}): write by {{.*}}role correction{{.*}} through the async proxy are not ordered: {{.*}}comes after that barrier)

func.func @attention(%q: memref<?x?x2x64xbf16>, %k: memref<?x?x2x64xbf16>,
                     %v: memref<?x?x2x64xbf16>, %o: memref<?x?x2x64xbf16>) {
  fa4.attention ins(%q, %k, %v : memref<?x?x2x64xbf16>, memref<?x?x2x64xbf16>,
                    memref<?x?x2x64xbf16>)
                outs(%o : memref<?x?x2x64xbf16>)
  return
}
