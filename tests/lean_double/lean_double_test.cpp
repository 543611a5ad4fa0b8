// Layout and behaviour tests of the project's lean.h and the Lean runtime double, against the
// facts in shared/abi/LEAN-OBJECTS.md. If a real toolchain header is ever compiled into this test
// instead, the layout tests check that header too.

#include "lean_double.h"

#include <gtest/gtest.h>
#include <lean/lean.h>
#include <lean/mimalloc.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// Data pointers of finalized external objects, in finalization order.
std::mutex g_finalized_mutex;
std::vector<void*> g_finalized;

// Every test must leave the number of live heap objects where it found it.
class LeanDouble : public ::testing::Test {
 protected:
  void SetUp() override {
    baseline_ = tlrt_lean_double_live_objects();
    std::lock_guard<std::mutex> lock(g_finalized_mutex);
    g_finalized.clear();
  }
  void TearDown() override {
    EXPECT_EQ(tlrt_lean_double_live_objects(), baseline_) << "objects leaked or freed twice";
  }
  int64_t live() const { return tlrt_lean_double_live_objects() - baseline_; }

 private:
  int64_t baseline_ = 0;
};

using LeanDoubleDeathTest = LeanDouble;

const uint8_t* bytes_of(const lean_object* o) {
  return reinterpret_cast<const uint8_t*>(o);
}

std::string str(b_lean_obj_arg s) {
  return std::string(lean_string_cstr(s), lean_string_size(s) - 1);
}

// ---- external objects with observable finalization --------------------------------------------

void record_finalize(void* data) {
  std::lock_guard<std::mutex> lock(g_finalized_mutex);
  g_finalized.push_back(data);
}

void no_foreach(void*, b_lean_obj_arg) {}

lean_external_class* token_class() {
  static lean_external_class* cls = lean_register_external_class(record_finalize, no_foreach);
  return cls;
}

size_t finalized_count(void* data) {
  std::lock_guard<std::mutex> lock(g_finalized_mutex);
  size_t n = 0;
  for (void* d : g_finalized) n += d == data;
  return n;
}

// A payload that holds a Lean object, reported to the runtime through foreach.
struct Holder {
  lean_object* held;
};

void holder_finalize(void* data) {
  auto* h = static_cast<Holder*>(data);
  lean_dec(h->held);
  delete h;
}

void holder_foreach(void* data, b_lean_obj_arg visitor) {
  auto* h = static_cast<Holder*>(data);
  lean_inc(visitor);
  lean_inc(h->held);
  lean_dec(lean_apply_1(visitor, h->held));
}

lean_external_class* holder_class() {
  static lean_external_class* cls = lean_register_external_class(holder_finalize, holder_foreach);
  return cls;
}

// ---- layout
// -----------------------------------------------------------------------------------------

TEST(LeanLayout, HeaderFieldsOccupyDocumentedBytes) {
  EXPECT_EQ(sizeof(lean_object), 8u);
  lean_object h{};
  h.m_rc = 0x01020304;
  h.m_cs_sz = 0xBEEF;
  h.m_other = 0x5A;
  h.m_tag = 0xA5;
  uint8_t b[8];
  std::memcpy(b, &h, sizeof b);
  EXPECT_EQ(b[0], 0x04);
  EXPECT_EQ(b[1], 0x03);
  EXPECT_EQ(b[2], 0x02);
  EXPECT_EQ(b[3], 0x01);
  EXPECT_EQ(b[4], 0xEF);
  EXPECT_EQ(b[5], 0xBE);
  EXPECT_EQ(b[6], 0x5A);
  EXPECT_EQ(b[7], 0xA5);
}

TEST(LeanLayout, ObjectStructOffsets) {
  EXPECT_EQ(sizeof(lean_ctor_object), 8u);
  EXPECT_EQ(offsetof(lean_ctor_object, m_objs), 8u);

  EXPECT_EQ(offsetof(lean_array_object, m_size), 8u);
  EXPECT_EQ(offsetof(lean_array_object, m_capacity), 16u);
  EXPECT_EQ(offsetof(lean_array_object, m_data), 24u);
  EXPECT_EQ(sizeof(lean_array_object), 24u);

  EXPECT_EQ(offsetof(lean_sarray_object, m_size), 8u);
  EXPECT_EQ(offsetof(lean_sarray_object, m_capacity), 16u);
  EXPECT_EQ(offsetof(lean_sarray_object, m_data), 24u);
  EXPECT_EQ(sizeof(lean_sarray_object), 24u);

  EXPECT_EQ(offsetof(lean_string_object, m_size), 8u);
  EXPECT_EQ(offsetof(lean_string_object, m_capacity), 16u);
  EXPECT_EQ(offsetof(lean_string_object, m_length), 24u);
  EXPECT_EQ(offsetof(lean_string_object, m_data), 32u);
  EXPECT_EQ(sizeof(lean_string_object), 32u);

  EXPECT_EQ(offsetof(lean_closure_object, m_fun), 8u);
  EXPECT_EQ(offsetof(lean_closure_object, m_arity), 16u);
  EXPECT_EQ(offsetof(lean_closure_object, m_num_fixed), 18u);
  EXPECT_EQ(offsetof(lean_closure_object, m_objs), 24u);
  EXPECT_EQ(sizeof(lean_closure_object), 24u);

  EXPECT_EQ(offsetof(lean_ref_object, m_value), 8u);
  EXPECT_EQ(sizeof(lean_ref_object), 16u);

  EXPECT_EQ(offsetof(lean_thunk_object, m_value), 8u);
  EXPECT_EQ(offsetof(lean_thunk_object, m_closure), 16u);
  EXPECT_EQ(sizeof(lean_thunk_object), 24u);

  EXPECT_EQ(offsetof(lean_task_object, m_value), 8u);
  EXPECT_EQ(offsetof(lean_task_object, m_imp), 16u);
  EXPECT_EQ(sizeof(lean_task_object), 24u);

  EXPECT_EQ(offsetof(lean_promise_object, m_result), 8u);
  EXPECT_EQ(sizeof(lean_promise_object), 16u);

  EXPECT_EQ(offsetof(lean_external_object, m_class), 8u);
  EXPECT_EQ(offsetof(lean_external_object, m_data), 16u);
  EXPECT_EQ(sizeof(lean_external_object), 24u);

  EXPECT_EQ(offsetof(lean_external_class, m_finalize), 0u);
  EXPECT_EQ(offsetof(lean_external_class, m_foreach), 8u);
  EXPECT_EQ(sizeof(lean_external_class), 16u);
}

TEST(LeanLayout, Constants) {
  EXPECT_EQ(LEAN_OBJECT_SIZE_DELTA, 8);
  EXPECT_EQ(LEAN_MAX_SMALL_OBJECT_SIZE, 4096);
  EXPECT_EQ(LEAN_MAX_CTOR_FIELDS, 256);
  EXPECT_EQ(LEAN_MAX_CTOR_SCALARS_SIZE, 1024);
  EXPECT_EQ(LEAN_CLOSURE_MAX_ARGS, 16);
  EXPECT_EQ(LEAN_MAX_SMALL_NAT, SIZE_MAX >> 1);
}

TEST(LeanLayout, TagConstants) {
  EXPECT_EQ(LeanMaxCtorTag, 243);
  EXPECT_EQ(LeanPromise, 244);
  EXPECT_EQ(LeanClosure, 245);
  EXPECT_EQ(LeanArray, 246);
  EXPECT_EQ(LeanStructArray, 247);
  EXPECT_EQ(LeanScalarArray, 248);
  EXPECT_EQ(LeanString, 249);
  EXPECT_EQ(LeanMPZ, 250);
  EXPECT_EQ(LeanThunk, 251);
  EXPECT_EQ(LeanTask, 252);
  EXPECT_EQ(LeanRef, 253);
  EXPECT_EQ(LeanExternal, 254);
  EXPECT_EQ(LeanReserved, 255);
  EXPECT_TRUE(lean_is_big_object_tag(LeanArray));
  EXPECT_TRUE(lean_is_big_object_tag(LeanStructArray));
  EXPECT_TRUE(lean_is_big_object_tag(LeanScalarArray));
  EXPECT_TRUE(lean_is_big_object_tag(LeanString));
  EXPECT_FALSE(lean_is_big_object_tag(LeanExternal));
  EXPECT_FALSE(lean_is_big_object_tag(0));
}

// ---- kinds and scalars -------------------------------------------------------------------------

TEST_F(LeanDouble, KindPredicatesFollowTheTag) {
  static int token;
  lean_object* ctor = lean_alloc_ctor(LeanMaxCtorTag, 0, 0);
  lean_object* arr = lean_mk_empty_array();
  lean_object* bytes = lean_mk_empty_byte_array(lean_box(0));
  lean_object* s = lean_mk_string("x");
  lean_object* ext = lean_alloc_external(token_class(), &token);

  EXPECT_TRUE(lean_is_ctor(ctor));
  EXPECT_EQ(lean_obj_tag(ctor), 243u);
  EXPECT_TRUE(lean_is_array(arr));
  EXPECT_EQ(lean_ptr_tag(arr), LeanArray);
  EXPECT_FALSE(lean_is_ctor(arr));
  EXPECT_TRUE(lean_is_sarray(bytes));
  EXPECT_EQ(lean_ptr_tag(bytes), LeanScalarArray);
  EXPECT_TRUE(lean_is_string(s));
  EXPECT_EQ(lean_ptr_tag(s), LeanString);
  EXPECT_TRUE(lean_is_external(ext));
  EXPECT_EQ(lean_ptr_tag(ext), LeanExternal);
  EXPECT_FALSE(lean_is_array(ext));
  EXPECT_EQ(lean_obj_tag(lean_box(17)), 17u);

  for (lean_object* o : {ctor, arr, bytes, s, ext}) lean_dec(o);
  EXPECT_EQ(finalized_count(&token), 1u);
}

TEST_F(LeanDouble, BoxingOfSmallScalars) {
  EXPECT_EQ(reinterpret_cast<uintptr_t>(lean_box(5)), (uintptr_t{5} << 1) | 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(lean_box(0)), 1u);
  EXPECT_TRUE(lean_is_scalar(lean_box(0)));
  EXPECT_EQ(lean_unbox(lean_box(5)), 5u);
  EXPECT_EQ(lean_unbox(lean_box(LEAN_MAX_SMALL_NAT)), LEAN_MAX_SMALL_NAT);

  lean_object* u32 = lean_box_uint32(0xFFFFFFFFu);
  EXPECT_TRUE(lean_is_scalar(u32));
  EXPECT_EQ(u32, lean_box(0xFFFFFFFFu));
  EXPECT_EQ(lean_unbox_uint32(u32), 0xFFFFFFFFu);
  EXPECT_EQ(live(), 0);

  // Scalars are never counted: inc/dec must ignore them.
  lean_inc(u32);
  lean_dec(u32);
  lean_inc_n(u32, 3);
}

TEST_F(LeanDouble, BoxUint64AllocatesCtorWithEightScalarBytes) {
  lean_object* o = lean_box_uint64(0x0123456789ABCDEFull);
  EXPECT_EQ(live(), 1);
  ASSERT_FALSE(lean_is_scalar(o));
  EXPECT_EQ(lean_ptr_tag(o), 0);
  EXPECT_EQ(lean_ctor_num_objs(o), 0u);
  EXPECT_EQ(o->m_rc, 1);
  EXPECT_EQ(lean_small_object_size(o), 16u);
  uint64_t raw;
  std::memcpy(&raw, bytes_of(o) + 8, sizeof raw);
  EXPECT_EQ(raw, 0x0123456789ABCDEFull);
  EXPECT_EQ(lean_unbox_uint64(o), 0x0123456789ABCDEFull);
  lean_dec(o);

  lean_object* z = lean_box_usize(SIZE_MAX);
  EXPECT_EQ(lean_ctor_num_objs(z), 0u);
  EXPECT_EQ(lean_unbox_usize(z), SIZE_MAX);
  lean_dec(z);
}

TEST_F(LeanDouble, BoxFloatRoundTripsBitPatterns) {
  const double values[] = {2.5, -0.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::quiet_NaN()};
  for (double v : values) {
    lean_object* o = lean_box_float(v);
    EXPECT_EQ(lean_ptr_tag(o), 0);
    EXPECT_EQ(lean_ctor_num_objs(o), 0u);
    const double back = lean_unbox_float(o);
    EXPECT_EQ(std::memcmp(&back, &v, sizeof v), 0);
    EXPECT_EQ(std::memcmp(bytes_of(o) + 8, &v, sizeof v), 0);
    lean_dec(o);
  }
  lean_object* f = lean_box_float32(-1.25f);
  EXPECT_EQ(lean_small_object_size(f), 16u);
  EXPECT_EQ(lean_unbox_float32(f), -1.25f);
  // 12 requested bytes rounded to 16: the padding is zeroed.
  for (int i = 12; i < 16; ++i) EXPECT_EQ(bytes_of(f)[i], 0) << i;
  lean_dec(f);
}

// ---- constructors -------------------------------------------------------------------------------

TEST_F(LeanDouble, CtorHeaderAndZeroedPadding) {
  // 8 header + 2 fields + 5 scalar bytes = 29, rounded to 32.
  lean_object* o = lean_alloc_ctor(3, 2, 5);
  EXPECT_EQ(o->m_rc, 1);
  EXPECT_EQ(lean_ptr_tag(o), 3);
  EXPECT_EQ(lean_ptr_other(o), 2u);
  EXPECT_EQ(lean_ctor_num_objs(o), 2u);
  EXPECT_EQ(lean_small_object_size(o), 32u);
  for (int i = 24; i < 32; ++i) EXPECT_EQ(bytes_of(o)[i], 0) << i;
  EXPECT_EQ(lean_ctor_scalar_cptr(o), bytes_of(o) + 24);
  lean_ctor_set(o, 0, lean_box(0));
  lean_ctor_set(o, 1, lean_box(1));
  lean_ctor_set_tag(o, 7);
  EXPECT_EQ(lean_obj_tag(o), 7u);
  lean_dec(o);
}

TEST_F(LeanDouble, CtorScalarAccessorsUseDocumentedOffsets) {
  // One pointer field, one usize slot, then uint32, uint16, uint8 (decreasing size).
  lean_object* o = lean_alloc_ctor(0, 1, 8 + 4 + 2 + 1);
  lean_ctor_set(o, 0, lean_box(42));
  lean_ctor_set_usize(o, 1, 0x1122334455667788ull);
  lean_ctor_set_uint32(o, 16, 0xA1B2C3D4u);
  lean_ctor_set_uint16(o, 20, 0xE5F6);
  lean_ctor_set_uint8(o, 22, 0x77);
  EXPECT_EQ(bytes_of(o)[8], 85);  // lean_box(42) = 85
  uint64_t usize_raw;
  std::memcpy(&usize_raw, bytes_of(o) + 16, 8);
  EXPECT_EQ(usize_raw, 0x1122334455667788ull);
  uint32_t u32_raw;
  std::memcpy(&u32_raw, bytes_of(o) + 24, 4);
  EXPECT_EQ(u32_raw, 0xA1B2C3D4u);
  uint16_t u16_raw;
  std::memcpy(&u16_raw, bytes_of(o) + 28, 2);
  EXPECT_EQ(u16_raw, 0xE5F6);
  EXPECT_EQ(bytes_of(o)[30], 0x77);
  EXPECT_EQ(bytes_of(o)[31], 0);
  EXPECT_EQ(lean_ctor_get_usize(o, 1), 0x1122334455667788ull);
  EXPECT_EQ(lean_ctor_get_uint32(o, 16), 0xA1B2C3D4u);
  EXPECT_EQ(lean_ctor_get_uint16(o, 20), 0xE5F6);
  EXPECT_EQ(lean_ctor_get_uint8(o, 22), 0x77);

  lean_object* d = lean_alloc_ctor(0, 0, 12);
  lean_ctor_set_float(d, 0, 1.5);
  lean_ctor_set_float32(d, 8, 0.25f);
  lean_ctor_set_uint64(d, 0, lean_ctor_get_uint64(d, 0));
  EXPECT_EQ(lean_ctor_get_float(d, 0), 1.5);
  EXPECT_EQ(lean_ctor_get_float32(d, 8), 0.25f);
  lean_dec(d);
  lean_dec(o);
}

TEST_F(LeanDouble, NestedProductsAndOptionsReleaseEverything) {
  // ("a", ("b", some "c")) built the way TorchLean builds tuples and options.
  lean_object* some_c = lean_alloc_ctor(1, 1, 0);
  lean_ctor_set(some_c, 0, lean_mk_string("c"));
  lean_object* inner = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(inner, 0, lean_mk_string("b"));
  lean_ctor_set(inner, 1, some_c);
  lean_object* outer = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(outer, 0, lean_mk_string("a"));
  lean_ctor_set(outer, 1, inner);
  EXPECT_EQ(live(), 6);
  EXPECT_EQ(str(lean_ctor_get(lean_ctor_get(lean_ctor_get(outer, 1), 1), 0)), "c");

  lean_object* b = lean_ctor_get(inner, 0);
  lean_inc(b);  // survives its container
  lean_dec(outer);
  EXPECT_EQ(live(), 1);
  EXPECT_EQ(str(b), "b");
  lean_dec(b);
}

TEST_F(LeanDouble, CtorReleaseDropsFieldAndStoresBoxZero) {
  lean_object* o = lean_alloc_ctor(0, 1, 0);
  lean_ctor_set(o, 0, lean_mk_string("gone"));
  lean_ctor_release(o, 0);
  EXPECT_EQ(lean_ctor_get(o, 0), lean_box(0));
  EXPECT_EQ(live(), 1);
  lean_dec(o);
}

// ---- reference counting
// -----------------------------------------------------------------------------

TEST_F(LeanDouble, SingleThreadedCounting) {
  lean_object* s = lean_mk_string("rc");
  EXPECT_TRUE(lean_is_st(s));
  EXPECT_TRUE(lean_is_exclusive(s));
  EXPECT_FALSE(lean_is_shared(s));
  lean_inc(s);
  EXPECT_EQ(s->m_rc, 2);
  EXPECT_FALSE(lean_is_exclusive(s));
  EXPECT_TRUE(lean_is_shared(s));
  lean_inc_n(s, 3);
  EXPECT_EQ(s->m_rc, 5);
  for (int i = 0; i < 4; ++i) lean_dec(s);
  EXPECT_EQ(s->m_rc, 1);
  EXPECT_EQ(live(), 1);
  lean_dec(s);
  EXPECT_EQ(live(), 0);
}

TEST_F(LeanDouble, PersistentObjectsAreNeverCountedOrFreed) {
  lean_object* s = lean_mk_string("kept");
  lean_object* pair = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(pair, 0, s);
  lean_ctor_set(pair, 1, lean_box(3));
  lean_mark_persistent(pair);
  EXPECT_TRUE(lean_is_persistent(pair));
  EXPECT_TRUE(lean_is_persistent(s));
  EXPECT_FALSE(lean_is_exclusive(pair));
  EXPECT_FALSE(lean_is_shared(pair));
  for (int i = 0; i < 3; ++i) {
    lean_inc(pair);
    lean_inc_n(s, 4);
    lean_dec(pair);
    lean_dec(pair);
    lean_dec(s);
  }
  EXPECT_EQ(pair->m_rc, 0);
  EXPECT_EQ(s->m_rc, 0);
  EXPECT_EQ(live(), 2);
  // Persistent memory is only ever reclaimed explicitly.
  lean_free_object(s);
  lean_free_object(pair);
}

// Closed terms that the compiler emits as static data (m_rc 0, possibly read-only memory).
struct StaticString {
  lean_object header;
  size_t size;
  size_t capacity;
  size_t length;
  char data[8];
};
const StaticString kStaticHello = {{0, 1, 0, LeanString}, 6, 6, 5, "hello"};

TEST_F(LeanDouble, ReadOnlyStaticObjectsAreNeverWritten) {
  lean_object* s = const_cast<lean_object*>(&kStaticHello.header);
  lean_inc(s);
  lean_inc_n(s, 2);
  lean_dec(s);
  lean_dec(s);
  EXPECT_TRUE(lean_is_persistent(s));
  EXPECT_STREQ(lean_string_cstr(s), "hello");
  EXPECT_EQ(lean_string_len(s), 5u);
  EXPECT_EQ(lean_string_size(s), 6u);
  lean_object* a = lean_alloc_array(1, 1);
  lean_array_set_core(a, 0, s);
  lean_dec(a);
}

TEST_F(LeanDouble, MultiThreadedObjectsDieOnceAcrossThreads) {
  static int token;
  constexpr int kThreads = 8;
  lean_object* ext = lean_alloc_external(token_class(), &token);
  lean_object* arr = tlrt_lean_double_mk_array(&ext, 1);
  lean_mark_mt(arr);
  EXPECT_TRUE(lean_is_mt(arr));
  EXPECT_TRUE(lean_is_mt(ext));
  EXPECT_EQ(arr->m_rc, -1);
  EXPECT_FALSE(lean_is_exclusive(arr));
  lean_inc_n(arr, kThreads - 1);
  EXPECT_EQ(arr->m_rc, -kThreads);

  std::atomic<int> go{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (go.load() == 0) {
      }
      for (int i = 0; i < 1000; ++i) {
        lean_inc(arr);
        lean_dec(arr);
      }
      lean_dec(arr);
    });
  }
  go.store(1);
  for (auto& th : threads) th.join();
  EXPECT_EQ(finalized_count(&token), 1u);
}

TEST_F(LeanDouble, DeepNestingIsReleasedIteratively) {
  lean_object* list = lean_box(0);
  for (int i = 0; i < 200000; ++i) {
    lean_object* cons = lean_alloc_ctor(1, 2, 0);
    lean_ctor_set(cons, 0, lean_box_uint64(static_cast<uint64_t>(i)));
    lean_ctor_set(cons, 1, list);
    list = cons;
  }
  EXPECT_EQ(live(), 400000);
  lean_dec(list);
}

// ---- external objects
// -------------------------------------------------------------------------------

TEST_F(LeanDouble, ExternalClassRegistrationAllocatesEachTime) {
  lean_external_class* a = lean_register_external_class(record_finalize, no_foreach);
  lean_external_class* b = lean_register_external_class(record_finalize, no_foreach);
  EXPECT_NE(a, b);
  EXPECT_EQ(a->m_finalize, &record_finalize);
  EXPECT_EQ(a->m_foreach, &no_foreach);
}

TEST_F(LeanDouble, ExternalFinalizedExactlyOnceWhenLastReferenceDrops) {
  static int token;
  lean_object* ext = lean_alloc_external(token_class(), &token);
  EXPECT_EQ(lean_small_object_size(ext), 24u);
  EXPECT_EQ(lean_ptr_other(ext), 0u);
  EXPECT_EQ(lean_get_external_class(ext), token_class());
  EXPECT_EQ(lean_get_external_data(ext), &token);
  lean_inc(ext);
  lean_dec(ext);
  EXPECT_EQ(finalized_count(&token), 0u);
  lean_dec(ext);
  EXPECT_EQ(finalized_count(&token), 1u);
}

TEST_F(LeanDouble, ExternalInsideContainersFinalizedOnce) {
  static int in_array;
  static int in_ctor;
  lean_object* e1 = lean_alloc_external(token_class(), &in_array);
  lean_inc(e1);
  lean_object* elems[] = {e1, lean_box(9), e1};
  lean_object* arr = tlrt_lean_double_mk_array(elems, 3);

  lean_object* e2 = lean_alloc_external(token_class(), &in_ctor);
  lean_object* some = lean_alloc_ctor(1, 1, 0);
  lean_ctor_set(some, 0, e2);
  lean_object* pair = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(pair, 0, some);
  lean_ctor_set(pair, 1, arr);

  EXPECT_EQ(e1->m_rc, 2);
  lean_dec(pair);
  EXPECT_EQ(finalized_count(&in_array), 1u);
  EXPECT_EQ(finalized_count(&in_ctor), 1u);
}

TEST_F(LeanDouble, SetExternalDataCopiesSharedObjects) {
  static int first;
  static int second;
  static int third;
  lean_object* ext = lean_alloc_external(token_class(), &first);
  lean_object* same = lean_set_external_data(ext, &second);
  EXPECT_EQ(same, ext);
  EXPECT_EQ(lean_get_external_data(same), &second);

  lean_inc(same);  // now shared: a new object must be made
  lean_object* other = lean_set_external_data(same, &third);
  EXPECT_NE(other, same);
  EXPECT_EQ(lean_get_external_data(same), &second);
  EXPECT_EQ(lean_get_external_data(other), &third);
  EXPECT_EQ(lean_get_external_class(other), token_class());
  lean_dec(other);
  lean_dec(same);
  EXPECT_EQ(finalized_count(&first), 0u);
  EXPECT_EQ(finalized_count(&second), 1u);
  EXPECT_EQ(finalized_count(&third), 1u);
}

TEST_F(LeanDouble, MarkMtReachesPayloadThroughForeach) {
  lean_object* held = lean_mk_string("payload");
  lean_object* ext = lean_alloc_external(holder_class(), new Holder{held});
  lean_mark_mt(ext);
  EXPECT_TRUE(lean_is_mt(ext));
  EXPECT_TRUE(lean_is_mt(held));
  EXPECT_EQ(held->m_rc, -1);
  EXPECT_EQ(live(), 2);
  lean_dec(ext);
}

// ---- closures
// ---------------------------------------------------------------------------------------

lean_object* add3(lean_object* a, lean_object* b, lean_object* c) {
  return lean_box(lean_unbox(a) + lean_unbox(b) + lean_unbox(c));
}

lean_object* string_size_plus(lean_object* s, lean_object* n) {
  lean_object* r = lean_box(lean_string_size(s) - 1 + lean_unbox(n));
  lean_dec(s);
  return r;
}

lean_object* make_adder(lean_object* a) {
  lean_object* c = lean_alloc_closure(reinterpret_cast<void*>(&add3), 3, 2);
  lean_closure_set(c, 0, a);
  lean_closure_set(c, 1, lean_box(0));
  return c;
}

TEST_F(LeanDouble, ApplyHandlesExactPartialAndOverApplication) {
  lean_object* f = lean_alloc_closure(reinterpret_cast<void*>(&add3), 3, 0);
  EXPECT_EQ(lean_closure_arity(f), 3u);
  EXPECT_EQ(lean_closure_num_fixed(f), 0u);
  lean_object* g = lean_apply_1(f, lean_box(1));
  EXPECT_EQ(lean_closure_num_fixed(g), 1u);
  EXPECT_EQ(lean_apply_2(g, lean_box(2), lean_box(3)), lean_box(6));

  lean_object* mk = lean_alloc_closure(reinterpret_cast<void*>(&make_adder), 1, 0);
  EXPECT_EQ(lean_apply_2(mk, lean_box(10), lean_box(5)), lean_box(15));
  lean_object* args[] = {lean_box(1), lean_box(2), lean_box(3)};
  EXPECT_EQ(lean_apply_n(lean_alloc_closure(reinterpret_cast<void*>(&add3), 3, 0), 3, args),
            lean_box(6));
}

TEST_F(LeanDouble, ApplyOfSharedClosureKeepsFixedArguments) {
  lean_object* c = lean_alloc_closure(reinterpret_cast<void*>(&string_size_plus), 2, 1);
  lean_object* s = lean_mk_string("four");
  lean_closure_set(c, 0, s);
  lean_inc(c);
  EXPECT_EQ(lean_apply_1(c, lean_box(1)), lean_box(5));
  EXPECT_EQ(s->m_rc, 1);
  EXPECT_EQ(lean_closure_get(c, 0), s);
  EXPECT_EQ(lean_apply_1(c, lean_box(2)), lean_box(6));
}

// ---- arrays
// -----------------------------------------------------------------------------------------

TEST_F(LeanDouble, ArrayLayoutAndBorrowedVersusOwnedAccess) {
  lean_object* elems[] = {lean_mk_string("x"), lean_box_float(0.5), lean_box(7)};
  lean_object* a = tlrt_lean_double_mk_array(elems, 3);
  EXPECT_TRUE(lean_is_array(a));
  EXPECT_EQ(lean_ptr_other(a), 0u);
  EXPECT_EQ(lean_array_size(a), 3u);
  EXPECT_EQ(lean_array_capacity(a), 3u);
  EXPECT_EQ(lean_array_get_size(a), lean_box(3));
  EXPECT_EQ(reinterpret_cast<uint8_t*>(lean_array_cptr(a)), bytes_of(a) + 24);

  lean_object* borrowed = lean_array_get_core(a, 0);
  EXPECT_EQ(borrowed, elems[0]);
  EXPECT_EQ(borrowed->m_rc, 1);
  lean_object* owned = lean_array_uget(a, 1);
  EXPECT_EQ(owned->m_rc, 2);
  lean_object* by_nat = lean_array_fget(a, lean_box(1));
  EXPECT_EQ(owned->m_rc, 3);
  lean_dec(by_nat);
  EXPECT_EQ(lean_array_uget(a, 2), lean_box(7));

  lean_dec(a);
  EXPECT_EQ(live(), 1);  // the owned float outlives the array
  EXPECT_EQ(lean_unbox_float(owned), 0.5);
  lean_dec(owned);
}

TEST_F(LeanDouble, EmptyArrays) {
  lean_object* a = lean_mk_empty_array();
  lean_object* b = lean_mk_empty_array();
  EXPECT_NE(a, b);
  EXPECT_EQ(lean_array_size(a), 0u);
  lean_object* c = lean_mk_empty_array_with_capacity(lean_box(4));
  EXPECT_EQ(lean_array_size(c), 0u);
  EXPECT_EQ(lean_array_capacity(c), 4u);
  lean_array_set_size(c, 1);
  lean_array_set_core(c, 0, lean_mk_string("in"));
  EXPECT_EQ(lean_array_byte_size(c), 24u + 4 * 8);
  EXPECT_EQ(lean_array_data_byte_size(c), 24u + 8);
  EXPECT_EQ(lean_array_sz(c), lean_box(1));  // consumes c
  lean_dec(a);
  lean_dec(b);
}

// ---- scalar arrays
// ----------------------------------------------------------------------------------

TEST_F(LeanDouble, FloatArrayCanonicalConstruction) {
  const double src[] = {1.0, -2.5, 3.25, 1e300};
  const size_t n = 4;
  lean_object* out = lean_mk_empty_float_array(lean_box(n));
  EXPECT_EQ(lean_sarray_size(out), 0u);
  lean_sarray_set_size(out, n);
  std::memcpy(lean_float_array_cptr(out), src, sizeof src);

  EXPECT_TRUE(lean_is_sarray(out));
  EXPECT_EQ(lean_ptr_tag(out), LeanScalarArray);
  EXPECT_EQ(lean_sarray_elem_size(out), 8u);
  EXPECT_EQ(lean_sarray_size(out), n);
  EXPECT_EQ(lean_sarray_capacity(out), n);
  EXPECT_EQ(lean_float_array_size(out), lean_box(n));
  EXPECT_EQ(lean_sarray_cptr(out), bytes_of(out) + 24);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(lean_float_array_cptr(out)), lean_sarray_cptr(out));
  EXPECT_EQ(lean_float_array_uget(out, 1), -2.5);
  EXPECT_EQ(lean_float_array_fget(out, lean_box(3)), 1e300);
  EXPECT_EQ(lean_float_array_get(out, lean_box(4)), 0.0);
  EXPECT_EQ(lean_sarray_byte_size(out), 24u + 32);
  EXPECT_EQ(lean_sarray_data_byte_size(out), 24u + 32);

  lean_object* same = tlrt_lean_double_mk_float_array(src, n);
  EXPECT_EQ(std::memcmp(lean_float_array_cptr(same), lean_float_array_cptr(out), sizeof src), 0);
  lean_dec(same);
  lean_dec(out);

  lean_object* empty = tlrt_lean_double_mk_float_array(nullptr, 0);
  EXPECT_EQ(lean_sarray_size(empty), 0u);
  lean_dec(empty);
}

TEST_F(LeanDouble, ByteArray) {
  const uint8_t src[] = {0, 1, 254, 255, 7};
  lean_object* b = tlrt_lean_double_mk_byte_array(src, sizeof src);
  EXPECT_EQ(lean_sarray_elem_size(b), 1u);
  EXPECT_EQ(lean_ptr_other(b), 1u);
  EXPECT_EQ(lean_sarray_size(b), 5u);
  EXPECT_EQ(lean_byte_array_size(b), lean_box(5));
  EXPECT_EQ(lean_byte_array_uget(b, 3), 255);
  EXPECT_EQ(lean_byte_array_get(b, lean_box(2)), 254);
  EXPECT_EQ(lean_byte_array_get(b, lean_box(5)), 0);
  EXPECT_EQ(lean_byte_array_fget(b, lean_box(4)), 7);
  lean_dec(b);

  lean_object* e = lean_mk_empty_byte_array(lean_box(16));
  EXPECT_EQ(lean_sarray_capacity(e), 16u);
  EXPECT_EQ(lean_sarray_size(e), 0u);
  lean_dec(e);
}

// ---- strings
// ------------------------------------------------------------------------------------------

TEST_F(LeanDouble, StringLayoutCountsNulAndCodePoints) {
  lean_object* s = lean_mk_string("hello");
  EXPECT_EQ(lean_ptr_tag(s), LeanString);
  EXPECT_EQ(lean_ptr_other(s), 0u);
  EXPECT_EQ(lean_string_size(s), 6u);
  EXPECT_EQ(lean_string_capacity(s), 6u);
  EXPECT_EQ(lean_string_len(s), 5u);
  EXPECT_EQ(lean_string_length(s), lean_box(5));
  EXPECT_EQ(lean_string_utf8_byte_size(s), lean_box(5));
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(lean_string_cstr(s)), bytes_of(s) + 32);
  EXPECT_STREQ(lean_string_cstr(s), "hello");
  lean_dec(s);

  // h é l l o ␠ € 𝄞: 14 bytes, 8 code points.
  lean_object* u = lean_mk_string("h\xc3\xa9llo \xe2\x82\xac\xf0\x9d\x84\x9e");
  EXPECT_EQ(lean_string_size(u), 15u);
  EXPECT_EQ(lean_string_len(u), 8u);
  lean_dec(u);

  EXPECT_EQ(lean_utf8_strlen("\xe2\x82\xac!"), 2u);
  EXPECT_EQ(lean_utf8_n_strlen("\xe2\x82\xac!", 3), 1u);
}

TEST_F(LeanDouble, StringsMayContainNul) {
  lean_object* s = lean_mk_string_from_bytes("a\0b", 3);
  EXPECT_EQ(lean_string_size(s), 4u);
  EXPECT_EQ(lean_string_len(s), 3u);
  EXPECT_EQ(std::strlen(lean_string_cstr(s)), 1u);
  EXPECT_EQ(str(s), std::string("a\0b", 3));
  lean_dec(s);
}

TEST_F(LeanDouble, IllFormedUtf8IsReplaced) {
  struct Case {
    const char* in;
    const char* out;
    size_t len;
  };
  const Case cases[] = {
      {"a\xff"
       "b",
       "a\xef\xbf\xbd"
       "b",
       3},                                      // invalid byte
      {"\xe2\x82", "\xef\xbf\xbd", 1},          // truncated sequence
      {"\xc0\x80z", "\xef\xbf\xbdz", 2},        // overlong NUL
      {"\xed\xa0\x80", "\xef\xbf\xbd", 1},      // surrogate
      {"\xf4\x90\x80\x80", "\xef\xbf\xbd", 1},  // past U+10FFFF
      {"\x80\x80x", "\xef\xbf\xbdx", 2},        // a run of stray continuations is one sequence
  };
  for (const Case& c : cases) {
    lean_object* s = lean_mk_string(c.in);
    EXPECT_STREQ(lean_string_cstr(s), c.out) << c.in;
    EXPECT_EQ(lean_string_size(s), std::strlen(c.out) + 1) << c.in;
    EXPECT_EQ(lean_string_len(s), c.len) << c.in;
    lean_dec(s);
  }
  lean_object* raw = lean_mk_string_from_bytes_unchecked("\xe2\x82\xac", 3);
  EXPECT_EQ(lean_string_len(raw), 1u);
  lean_dec(raw);
  lean_object* ascii = lean_mk_ascii_string_unchecked("abc");
  EXPECT_EQ(lean_string_len(ascii), 3u);
  lean_dec(ascii);
}

// ---- IO results and errors
// ----------------------------------------------------------------------------

TEST_F(LeanDouble, IoResultsHaveOneField) {
  lean_object* ok = lean_io_result_mk_ok(lean_box(0));
  EXPECT_EQ(lean_ptr_tag(ok), 0);
  EXPECT_EQ(lean_ctor_num_objs(ok), 1u);
  EXPECT_EQ(lean_small_object_size(ok), 16u);
  EXPECT_TRUE(lean_io_result_is_ok(ok));
  EXPECT_FALSE(lean_io_result_is_error(ok));
  EXPECT_EQ(lean_io_result_get_value(ok), lean_box(0));
  tlrt_lean_double_io_error_view view;
  EXPECT_FALSE(tlrt_lean_double_io_error_of(ok, &view));
  lean_dec(ok);

  lean_object* err = lean_io_result_mk_error(lean_mk_io_user_error(lean_mk_string("bad")));
  EXPECT_EQ(lean_ptr_tag(err), 1);
  EXPECT_EQ(lean_ctor_num_objs(err), 1u);
  EXPECT_TRUE(lean_io_result_is_error(err));
  EXPECT_EQ(lean_obj_tag(lean_io_result_get_error(err)), 18u);
  lean_dec(err);

  EXPECT_EQ(lean_io_mk_world(), lean_box(0));
}

TEST_F(LeanDouble, IoResultTakeValueTransfersOwnership) {
  lean_object* r = lean_io_result_mk_ok(lean_box_float(2.5));
  lean_object* v = lean_io_result_take_value(r);
  EXPECT_EQ(live(), 1);
  EXPECT_EQ(v->m_rc, 1);
  EXPECT_EQ(lean_unbox_float(v), 2.5);
  lean_dec(v);

  lean_object* r2 = lean_io_result_mk_ok(lean_box_uint32(7));
  EXPECT_EQ(lean_unbox_uint32(lean_io_result_take_value(r2)), 7u);
}

TEST_F(LeanDouble, UserErrorLayout) {
  lean_object* msg = lean_mk_string("plain message");
  lean_object* e = lean_mk_io_user_error(msg);
  EXPECT_EQ(lean_obj_tag(e), 18u);
  EXPECT_EQ(lean_ctor_num_objs(e), 1u);
  EXPECT_EQ(lean_ctor_get(e, 0), msg);
  EXPECT_EQ(lean_small_object_size(e), 16u);
  lean_dec(e);
}

TEST_F(LeanDouble, OtherErrorLayout) {
  lean_object* e = lean_mk_io_error_other_error(0xDEADBEEFu, lean_mk_string("details"));
  EXPECT_EQ(lean_obj_tag(e), 1u);
  EXPECT_EQ(lean_ctor_num_objs(e), 1u);
  EXPECT_EQ(lean_small_object_size(e), 24u);  // 8 + 8 + 4 rounded
  EXPECT_EQ(lean_ctor_get_uint32(e, 8), 0xDEADBEEFu);
  uint32_t raw;
  std::memcpy(&raw, bytes_of(e) + 16, 4);
  EXPECT_EQ(raw, 0xDEADBEEFu);
  for (int i = 20; i < 24; ++i) EXPECT_EQ(bytes_of(e)[i], 0) << i;
  EXPECT_EQ(str(lean_ctor_get(e, 0)), "details");
  lean_dec(e);
}

TEST_F(LeanDouble, ResourceExhaustedLayout) {
  lean_object* e = lean_mk_io_error_resource_exhausted(12, lean_mk_string("no memory"));
  EXPECT_EQ(lean_obj_tag(e), 14u);
  EXPECT_EQ(lean_ctor_num_objs(e), 2u);
  EXPECT_EQ(lean_small_object_size(e), 32u);  // 8 + 16 + 4 rounded
  EXPECT_EQ(lean_ctor_get(e, 0), lean_box(0));
  EXPECT_EQ(str(lean_ctor_get(e, 1)), "no memory");
  EXPECT_EQ(lean_ctor_get_uint32(e, 16), 12u);
  uint32_t raw;
  std::memcpy(&raw, bytes_of(e) + 24, 4);
  EXPECT_EQ(raw, 12u);
  lean_dec(e);

  lean_object* f = lean_mk_io_error_resource_exhausted_file(lean_mk_string("/dev/x"), 28,
                                                            lean_mk_string("full"));
  lean_object* some = lean_ctor_get(f, 0);
  EXPECT_EQ(lean_obj_tag(some), 1u);
  EXPECT_EQ(lean_ctor_num_objs(some), 1u);
  EXPECT_EQ(str(lean_ctor_get(some, 0)), "/dev/x");
  EXPECT_EQ(lean_ctor_get_uint32(f, 16), 28u);
  lean_dec(f);
}

TEST_F(LeanDouble, OtherIoErrorConstructors) {
  lean_object* eof = lean_mk_io_error_eof(lean_box(0));
  EXPECT_EQ(eof, lean_box(17));
  lean_object* intr = lean_mk_io_error_interrupted(lean_mk_string("f"), 4, lean_mk_string("d"));
  EXPECT_EQ(lean_obj_tag(intr), 10u);
  EXPECT_TRUE(lean_is_string(lean_ctor_get(intr, 0)));
  lean_dec(intr);
  const struct {
    lean_object* (*mk)(uint32_t, lean_obj_arg);
    unsigned tag;
    unsigned fields;
  } simple[] = {
      {lean_mk_io_error_already_exists, 0, 2},
      {lean_mk_io_error_other_error, 1, 1},
      {lean_mk_io_error_resource_busy, 2, 1},
      {lean_mk_io_error_resource_vanished, 3, 1},
      {lean_mk_io_error_unsupported_operation, 4, 1},
      {lean_mk_io_error_hardware_fault, 5, 1},
      {lean_mk_io_error_unsatisfied_constraints, 6, 1},
      {lean_mk_io_error_illegal_operation, 7, 1},
      {lean_mk_io_error_protocol_error, 8, 1},
      {lean_mk_io_error_time_expired, 9, 1},
      {lean_mk_io_error_invalid_argument, 12, 2},
      {lean_mk_io_error_permission_denied, 13, 2},
      {lean_mk_io_error_resource_exhausted, 14, 2},
      {lean_mk_io_error_inappropriate_type, 15, 2},
      {lean_mk_io_error_no_such_thing, 16, 2},
  };
  for (const auto& c : simple) {
    lean_object* r = lean_io_result_mk_error(c.mk(33, lean_mk_string("x")));
    tlrt_lean_double_io_error_view v;
    ASSERT_TRUE(tlrt_lean_double_io_error_of(r, &v));
    EXPECT_EQ(v.tag, c.tag);
    EXPECT_EQ(lean_ctor_num_objs(lean_io_result_get_error(r)), c.fields) << c.tag;
    EXPECT_EQ(v.os_code, 33u) << c.tag;
    EXPECT_STREQ(v.details, "x");
    EXPECT_EQ(v.filename, nullptr);
    lean_dec(r);
  }
}

TEST_F(LeanDouble, IoErrorViewDecodesResults) {
  lean_object* r = lean_io_result_mk_error(
      lean_mk_io_error_no_such_thing_file(lean_mk_string("a.bin"), 2, lean_mk_string("gone")));
  tlrt_lean_double_io_error_view v;
  ASSERT_TRUE(tlrt_lean_double_io_error_of(r, &v));
  EXPECT_EQ(v.tag, unsigned{TLRT_IO_ERROR_NO_SUCH_THING});
  EXPECT_EQ(v.os_code, 2u);
  EXPECT_STREQ(v.filename, "a.bin");
  EXPECT_STREQ(v.details, "gone");
  lean_dec(r);

  lean_object* u = lean_io_result_mk_error(lean_mk_io_user_error(lean_mk_string("m")));
  ASSERT_TRUE(tlrt_lean_double_io_error_of(u, &v));
  EXPECT_EQ(v.tag, unsigned{TLRT_IO_ERROR_USER_ERROR});
  EXPECT_EQ(v.os_code, 0u);
  EXPECT_STREQ(v.details, "m");
  lean_dec(u);
}

TEST_F(LeanDouble, IoErrorToStringFollowsLean) {
  struct Case {
    lean_object* err;
    const char* text;
  };
  const Case cases[] = {
      {lean_mk_io_user_error(lean_mk_string("Verbatim Text")), "Verbatim Text"},
      {lean_mk_io_error_other_error(2, lean_mk_string("Out of device memory")),
       "out of device memory (error code: 2)"},
      {lean_mk_io_error_resource_exhausted(12, lean_mk_string("CUDA allocation failed")),
       "resource exhausted (error code: 12, cUDA allocation failed)"},
      {lean_mk_io_error_eof(lean_box(0)), "end of file"},
      {lean_mk_io_error_no_file_or_directory(lean_mk_string("x.txt"), 2, lean_mk_string("ignored")),
       "no such file or directory (error code: 2)\n  file: x.txt"},
      {lean_mk_io_error_permission_denied_file(lean_mk_string("/root"), 13,
                                               lean_mk_string("Permission denied")),
       "permission denied (error code: 13)\n  file: /root"},
      {lean_mk_io_error_hardware_fault(5, lean_mk_string("ignored")),
       "hardware fault (error code: 5)"},
      {lean_mk_io_error_unsatisfied_constraints(39, lean_mk_string("ignored")),
       "directory not empty (error code: 39)"},
      {lean_mk_io_error_already_exists_file(lean_mk_string("f"), 17, lean_mk_string("Exists")),
       "already exists (error code: 17, exists)\n  file: f"},
  };
  for (const Case& c : cases) {
    lean_object* s = tlrt_lean_double_io_error_to_string(c.err);
    EXPECT_EQ(str(s), c.text);
    lean_dec(s);
    lean_dec(c.err);
  }
}

TEST_F(LeanDouble, ShowErrorPrintsUncaughtException) {
  lean_object* r = lean_io_result_mk_error(lean_mk_io_user_error(lean_mk_string("boom")));
  ::testing::internal::CaptureStderr();
  lean_io_result_show_error(r);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "uncaught exception: boom\n");
  lean_dec(r);
}

// ---- allocator
// --------------------------------------------------------------------------------------

TEST_F(LeanDouble, AllocationHooks) {
  lean_object* o = lean_alloc_object(40);
  EXPECT_EQ(live(), 1);
  lean_free_object(o);
  EXPECT_EQ(live(), 0);
  mi_collect(false);
  mi_collect(true);
}

// ---- panics
// -------------------------------------------------------------------------------------------

TEST_F(LeanDoubleDeathTest, InternalPanicPrintsAndExitsWithOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("LEAN_ABORT_ON_PANIC");
        lean_internal_panic("msg");
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: msg");
}

TEST_F(LeanDoubleDeathTest, InternalPanicAbortsWhenAsked) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("LEAN_ABORT_ON_PANIC", "1", 1);
        lean_internal_panic("abort requested");
      },
      ::testing::KilledBySignal(SIGABRT), "INTERNAL PANIC: abort requested");
}

TEST_F(LeanDoubleDeathTest, NonScalarCapacityIsOutOfMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("LEAN_ABORT_ON_PANIC");
        lean_object* big_nat = lean_alloc_ctor(0, 0, 0);  // any heap object is "too big"
        lean_mk_empty_float_array(big_nat);
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: out of memory");
}

// ---- header generations (TLRT_LEAN_GENERATION, docs/LEAN.md)
// -------------------------------------------------------------------------------------------------

TEST(LeanGeneration, DoubleWasBuiltAgainstTheSameGeneration) {
  EXPECT_EQ(tlrt_lean_double_generation(), TLRT_LEAN_GENERATION);
}

#if TLRT_LEAN_GENERATION == TLRT_LEAN_GENERATION_COMPAT

// v4.26-v4.29: every small object comes from mi_malloc_small, which is only valid up to 1 KiB.
TEST_F(LeanDoubleDeathTest, OversizedSmallObjectIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("LEAN_ABORT_ON_PANIC");
        lean_alloc_ctor(0, 200, 0);
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*mi_malloc_small");
}

#else

// The sticky-count generation takes small objects above 1 KiB from mi_malloc instead.
TEST_F(LeanDouble, SmallObjectsAboveOneKibibyteComeFromMiMalloc) {
  lean_object* o = lean_alloc_ctor(0, 200, 0);  // 8 + 200 * 8 bytes
  EXPECT_EQ(lean_small_object_size(o), 1608u);
  EXPECT_EQ(live(), 1);
  for (unsigned i = 0; i < 200; ++i) lean_ctor_set(o, i, lean_box(i));
  lean_dec(o);
  EXPECT_EQ(live(), 0);
}

TEST_F(LeanDouble, ClosuresAreVariableSizeObjects) {
  lean_object* c = lean_alloc_closure(reinterpret_cast<void*>(&no_foreach), 2, 1);
  EXPECT_EQ(lean_small_object_size(c), 0u);
  lean_closure_set(c, 0, lean_box(3));
  EXPECT_EQ(live(), 1);
  lean_dec(c);
}

TEST_F(LeanDouble, SingleThreadedOverflowFreezesTheCount) {
  lean_object* o = lean_box_uint64(7);
  o->m_rc = std::numeric_limits<int>::max();
  lean_inc(o);  // wraps into the sticky band
  EXPECT_LE(o->m_rc, LEAN_RC_STICKY);
  const int frozen = o->m_rc;
  lean_inc(o);
  lean_inc_n(o, 5);
  lean_dec(o);
  lean_dec(o);
  EXPECT_EQ(o->m_rc, frozen);
  EXPECT_EQ(live(), 1) << "a frozen object is never freed";
  lean_free_object(o);
}

TEST_F(LeanDouble, HugeSingleThreadedIncrementsAddAllOrFreeze) {
  lean_object* o = lean_box_uint64(7);
  lean_inc_ref_n(o, LEAN_RC_INC_MAX + 1);
  EXPECT_EQ(o->m_rc, static_cast<int>(LEAN_RC_INC_MAX) + 2);
  o->m_rc = std::numeric_limits<int>::max() - 10;
  lean_inc_ref_n(o, LEAN_RC_INC_MAX + 1);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY);
  lean_dec(o);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY);
  o->m_rc = 1;
  lean_dec(o);
  EXPECT_EQ(live(), 0);
}

TEST_F(LeanDouble, HugeMultiThreadedIncrementsStopAtTheBand) {
  lean_object* o = lean_box_uint64(7);
  lean_mark_mt(o);
  lean_inc_ref_n(o, 3 * LEAN_RC_INC_MAX + 5);
  EXPECT_EQ(o->m_rc, -(3 * static_cast<int>(LEAN_RC_INC_MAX) + 6));
  // One step short of the band: the first step freezes the count and the rest are dropped.
  o->m_rc = LEAN_RC_STICKY + 10;
  lean_inc_ref_n(o, 2 * LEAN_RC_INC_MAX);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY + 10 - static_cast<int>(LEAN_RC_INC_MAX));
  lean_dec(o);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY + 10 - static_cast<int>(LEAN_RC_INC_MAX));
  EXPECT_EQ(live(), 1);
  lean_free_object(o);
}

TEST_F(LeanDouble, MultiThreadedCountsFreezeBeforeWrapping) {
  lean_object* o = lean_box_uint64(7);
  lean_mark_mt(o);
  o->m_rc = LEAN_RC_STICKY + 1;
  lean_inc(o);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY);
  lean_inc(o);  // frozen: increments stop
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY);
  // Releases stop at the wider threshold already.
  o->m_rc = LEAN_RC_STICKY_DROP;
  lean_dec(o);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY_DROP);
  o->m_rc = LEAN_RC_STICKY_DROP + 1;
  lean_dec(o);
  EXPECT_EQ(o->m_rc, LEAN_RC_STICKY_DROP + 2);
  EXPECT_EQ(live(), 1);
  lean_free_object(o);
}

TEST_F(LeanDouble, FrozenFieldOutlivesItsContainer) {
  lean_object* child = lean_box_uint64(7);
  child->m_rc = LEAN_RC_STICKY;
  lean_object* parent = lean_alloc_ctor(0, 1, 0);
  lean_ctor_set(parent, 0, child);
  lean_dec(parent);
  EXPECT_EQ(live(), 1);
  EXPECT_EQ(child->m_rc, LEAN_RC_STICKY);
  lean_free_object(child);
}

TEST_F(LeanDoubleDeathTest, OversizedSmallObjectCoreIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("LEAN_ABORT_ON_PANIC");
        lean_alloc_small_object_core(2048);
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*lean_alloc_small_object_core");
}

TEST_F(LeanDoubleDeathTest, ObjectSizeOverflowPanics) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("LEAN_ABORT_ON_PANIC");
        lean_alloc_array(0, std::numeric_limits<size_t>::max() / 4);
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: integer overflow");
  EXPECT_EXIT(
      {
        unsetenv("LEAN_ABORT_ON_PANIC");
        lean_alloc_string(1, std::numeric_limits<size_t>::max() - 8, 0);
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: integer overflow");
}

#endif

}  // namespace
