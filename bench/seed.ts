// The bench data: companies and guests generated in SQL (200,000 guests in seconds), shared by the
// benchmarks that need a large guest table.
export const GENERATE = `
WITH c AS (
  INSERT INTO companies (name, city)
  SELECT 'Bench婚介' || g, (ARRAY['北京','上海','广州','深圳','杭州','成都','长沙','武汉','南京','西安'])[1 + g % 10]
  FROM generate_series(1, 200) g RETURNING id
)
SELECT min(id) AS first FROM c`

// Each column draws on its own bits of a multiplicative hash of the row number, so filters
// combine like independent attributes instead of moving in lockstep.
export const GUEST_INSERT = (first: number, from: number, to: number) => `
INSERT INTO guests (name, gender, age, phone, workplace, height, education, income_amount, income_level,
  family_income_amount, family_income_level, marital_status, company_id, status, completeness, created_at, updated_at, photo_time)
SELECT
  s.surname || s.given1 || s.given2,
  CASE WHEN h.v % 2 = 0 THEN 'male' ELSE 'female' END,
  20 + ((h.v / 2) % 40)::int,
  '1' || (3 + (h.v / 7) % 7)::text || lpad(((g::bigint * 7919) % 1000000000)::text, 9, '0'),
  (ARRAY['北京','上海','广州','深圳','杭州','成都','长沙','武汉','南京','西安','重庆','天津','苏州','郑州','青岛',
         '厦门','合肥','济南','昆明','沈阳','大连','福州','南昌','贵阳','南宁','太原','石家庄','哈尔滨','长春','兰州',
         '华为','腾讯','阿里巴巴','百度','京东','美团','字节跳动','国家电网','中国银行','人民医院'])[1 + ((h.v / 97) % 40)::int],
  150 + ((h.v / 13) % 40)::int,
  (ARRAY['高中及以下','大专','本科','硕士','博士'])[1 + ((h.v / 31) % 5)::int],
  i.amount, i.level, i.amount, i.level,
  (ARRAY['未婚','离异','丧偶'])[1 + ((h.v / 5) % 3)::int],
  ${first} + ((h.v / 3889) % 200)::int,
  (ARRAY['incomplete','available','matching','matched','archived'])[1 + ((h.v / 11) % 5)::int],
  0.4,
  t.created,
  t.created + (now() - t.created) * ((h.v / 17) % 100) / 100.0,
  t.created
FROM generate_series(${from}, ${to}) g
CROSS JOIN LATERAL (SELECT (g::bigint * 2654435761) % 4294967296 AS v) h
CROSS JOIN LATERAL (SELECT now() - ((h.v / 23) % 63072000) * interval '1 second' AS created) t
CROSS JOIN LATERAL (SELECT ((h.v / 41) % 60)::int * 20000 AS amount) a
CROSS JOIN LATERAL (SELECT a.amount, CASE WHEN a.amount < 100000 THEN '10万以下' WHEN a.amount < 200000 THEN '10-20万'
  WHEN a.amount < 300000 THEN '20-30万' WHEN a.amount < 500000 THEN '30-50万'
  WHEN a.amount < 1000000 THEN '50-100万' ELSE '100万以上' END AS level) i
CROSS JOIN LATERAL (SELECT
  (ARRAY['王','李','张','刘','陈','杨','黄','赵','吴','周','徐','孙','马','朱','胡','郭','何','高','林','罗',
         '郑','梁','谢','宋','唐','许','韩','冯','邓','曹','彭','曾','肖','田','董','袁','潘','于','蒋','蔡'])[1 + ((h.v / 53) % 40)::int] AS surname,
  (ARRAY['伟','芳','娜','敏','静','丽','强','磊','军','洋','勇','艳','杰','娟','涛','明','超','秀','霞','平',
         '刚','桂','英','华','玉','萍','红','鹏','辉','建','文','婷','宇','浩','欣','晨','雪','琳','博','然'])[1 + ((h.v / 2129) % 40)::int] AS given1,
  CASE WHEN (h.v / 85229) % 5 < 3 THEN (ARRAY['一','二','三','四','五','六','七','八','九','十','佳','嘉','思','梦','子','雨','诗','晓','俊','志'])[1 + ((h.v / 425) % 20)::int] ELSE '' END AS given2
) s`
