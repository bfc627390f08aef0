#include "ibf/inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ibf/error.h"

namespace fs = std::filesystem;
using namespace ibf;

namespace {

class InputsTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ibf-inputs-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

const char* kPlan = R"(version: 1
node_name_map: names.map
cables:
  - {a: sw1/1, b: hostA/1, rate: 4xEDR}
)";

}  // namespace

TEST_F(InputsTest, PlanNamesItsNodeNameMapRelativeToItsOwnFolder) {
    write_text_file(path("plan.yaml"), kPlan);
    write_text_file(path("names.map"), "0x0000000000000001 \"sw1\"\n");
    Expected e = load_expected(path("plan.yaml"));
    EXPECT_FALSE(e.golden);
    EXPECT_EQ(e.plan.links.size(), 1u);
    EXPECT_EQ(e.names_path, path("names.map"));
    ASSERT_EQ(e.names.size(), 1u);
    EXPECT_EQ(e.names.at(1), "sw1");
}

TEST_F(InputsTest, ExplicitNodeNameMapWinsOverThePlans) {
    write_text_file(path("plan.yaml"), kPlan);
    write_text_file(path("other.map"), "0x2 \"hostA\"\n");
    Expected e = load_expected(path("plan.yaml"), path("other.map"));
    EXPECT_EQ(e.names_path, path("other.map"));
    EXPECT_EQ(e.names.count(2), 1u);
}

TEST_F(InputsTest, GoldenDumpIsAPlanByGuidWithTheMapApplied) {
    const std::string dump = std::string(IBF_TEST_DATA) + "/ibnetdiscover-fdr10-qdr-8sw-144ca-sx6036.txt";
    write_text_file(path("names.map"), "0xf4521403001165a0 \"renamed-ib5\"\n");
    Expected e = load_expected(dump, path("names.map"));
    ASSERT_TRUE(e.golden);
    EXPECT_EQ(e.plan.nodes.size(), 152u);
    EXPECT_EQ(e.plan.links.size(), 192u);
    EXPECT_EQ(e.golden->find_by_name("renamed-ib5").size(), 1u);
    Fabric actual = load_dump_file(dump, e.names);
    EXPECT_EQ(actual.find_by_name("renamed-ib5").size(), 1u);
}

TEST_F(InputsTest, ErrorsNameTheFile) {
    try {
        load_expected(path("absent.yaml"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), path("absent.yaml"));
        EXPECT_NE(std::string(e.what()).find("cannot read the plan"), std::string::npos) << e.what();
    }
    write_text_file(path("plan.yaml"), kPlan);  // names.map is missing
    try {
        load_expected(path("plan.yaml"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), path("names.map"));
        EXPECT_NE(std::string(e.what()).find("node-name-map named by the plan"), std::string::npos) << e.what();
    }
    write_text_file(path("bad.txt"), "Switch 36 \"S-1\"\n[1] \"H-2\"[1] # \"x\" lid 3 4xZDR\n");
    EXPECT_THROW(load_dump_file(path("bad.txt")), InputError);
}
